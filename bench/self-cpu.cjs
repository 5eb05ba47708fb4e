// Preloaded by bench/run.mjs (node --require, so that a plain `node -e 0` gains no ESM loader): on
// exit, writes this process's own CPU time in ms (user + system, all its threads, not its children)
// to $BENCH_SELF_CPU_FILE.
'use strict';
process.on('exit', () => {
  const file = process.env.BENCH_SELF_CPU_FILE;
  if (!file) return;
  const { user, system } = process.cpuUsage();
  require('node:fs').writeFileSync(file, String((user + system) / 1000));
});
