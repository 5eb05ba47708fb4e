// The runner's one way to zod, configured before any schema is built: every module that builds a
// schema imports z from here. jitless: on the first parse of each object schema zod would generate
// a parser with `new Function`; a run parses each of its schemas about once, so generating the
// parser costs more CPU than it saves (BENCHMARKS.md, "Start").
import { z } from 'zod';

z.config({ jitless: true });

export { z };
