// Durations such as 30s, 5m or 1h30m, without zod: the command line parses them before any op
// (and zod) loads.
import { usageError } from '../errors.ts';

export const DURATION = /^(\d+h)?(\d+m)?(\d+s)?$/;

export function durationMs(text: string): number {
  const match = DURATION.exec(text);
  if (!match) throw usageError('SettingsInvalid', `"${text}" is not a duration such as 30s, 5m or 1h30m`);
  const part = (s: string | undefined) => (s ? Number.parseInt(s, 10) : 0);
  return ((part(match[1]) * 60 + part(match[2])) * 60 + part(match[3])) * 1000;
}
