// Preloaded by npm run bench's parts (bench/run.ts) into a node they measure (node --require, so that a plain `node -e 0`
// gains no ESM loader). On exit it appends one JSON line to $BENCH_SELF_USAGE_FILE: this process's
// own CPU time (user + system, all its threads, not its children), its peak RSS, and when it started
// and ended (ms since the epoch, sub-ms resolution), for the per-step timeline.
'use strict';
process.on('exit', () => {
  const file = process.env.BENCH_SELF_USAGE_FILE;
  if (!file) return;
  const { user, system } = process.cpuUsage();
  const { performance } = require('node:perf_hooks');
  const usage = {
    cpuMs: (user + system) / 1000,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    startedAtMs: performance.timeOrigin,
    exitAtMs: performance.timeOrigin + performance.now(),
  };
  require('node:fs').appendFileSync(file, JSON.stringify(usage) + '\n');
});
