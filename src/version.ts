// The runner's version, on its own so that `--version` loads nothing else: esbuild defines
// __RUNNER_VERSION__ (scripts/build.mjs); runs from source (tsx) say 0.0.0-dev.
declare const __RUNNER_VERSION__: string;
export const RUNNER_VERSION = typeof __RUNNER_VERSION__ === 'string' ? __RUNNER_VERSION__ : '0.0.0-dev';
