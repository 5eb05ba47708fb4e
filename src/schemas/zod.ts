// The runner's one way to zod, configured before any schema is built: every module that builds a
// schema imports it from here, as a namespace (`import * as z`), so that the bundle holds only the
// parts of zod the runner uses (the package's own `z` object would hold all of it).
// jitless: on the first parse of each object schema zod would generate a parser with `new Function`;
// a run parses each of its schemas about once, so generating the parser costs more CPU than it
// saves (BENCHMARKS.md, "Start").
import { config, number } from 'zod';

config({ jitless: true });

export * from 'zod';

/** A whole number, 0 or more (a count, a size, an offset): the runner's most repeated chain, stated once. */
export const nonNegativeInt = () => number().int().nonnegative();
