/** A UTC time as a name part that sorts by age and fits Kubernetes names: 20261130t031244512z. */
export const timeStamp = (date = new Date()): string => date.toISOString().replace(/[-:.]/g, '').toLowerCase();
