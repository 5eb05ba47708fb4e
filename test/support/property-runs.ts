// The seed and run counts of the fast-check properties. The suite runs each property a few dozen to
// a few hundred times (its time budget); a failure prints its seed and path. CAPTF_PROPERTY_SEED
// replays that seed, and CAPTF_PROPERTY_RUNS multiplies every run count for a deeper search (e.g. 10).
import fc from 'fast-check';

const seed = process.env.CAPTF_PROPERTY_SEED;
if (seed) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number(seed) });

/** `n` runs, times CAPTF_PROPERTY_RUNS. */
export const runs = (n: number) => n * Number(process.env.CAPTF_PROPERTY_RUNS || 1);
