// Durations, without zod (the command line parses them before any op, and zod, loads): whole seconds
// (`600`, what a controller has from activeDeadlineSeconds), or hours, minutes and seconds in that
// order, each a whole number with its unit (`30s`, `5m`, `1h30m`). Fractions (`1.5h`), other units
// and other orders are refused.
import { usageError } from '../errors.ts';

export const DURATION = /^(?:(\d+)|(?=\d)(\d+h)?(\d+m)?(\d+s)?)$/;

export const DURATION_GRAMMAR =
  'whole seconds (600), or hours, minutes and seconds in that order, each a whole number with its unit (30s, 5m, 1h30m)';

export function durationMs(text: string): number {
  const match = DURATION.exec(text);
  if (!match) throw usageError('SettingsInvalid', `"${text}" is not a duration: ${DURATION_GRAMMAR}`);
  const part = (s: string | undefined) => (s ? Number.parseInt(s, 10) : 0);
  return (part(match[1]) + (part(match[2]) * 60 + part(match[3])) * 60 + part(match[4])) * 1000;
}

/** The duration as terraform's -lock-timeout reads it (Go's durations need a unit): `600` → `600s`. */
export const terraformDuration = (text: string): string => (/^\d+$/.test(text) ? `${text}s` : text);
