// The runner's version and the contract version, on their own so that `--version` loads nothing
// else: esbuild defines __RUNNER_VERSION__ (scripts/build/build.mjs); runs from source (tsx) say 0.0.0-dev.
declare const __RUNNER_VERSION__: string;
export const RUNNER_VERSION = typeof __RUNNER_VERSION__ === 'string' ? __RUNNER_VERSION__ : '0.0.0-dev';

/** The contract between controller and runner this runner keeps: the apiVersion of its results and artifacts. */
export const CONTRACT_VERSION = 'runner.captf.io/v1';

/** What `--version` prints: a person's line; scripts use `--version --json`. */
export const VERSION_TEXT = `captf-runner ${RUNNER_VERSION} (contract ${CONTRACT_VERSION})`;
