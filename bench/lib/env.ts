// The environment the benchmarks run the runner and terraform in.

/**
 * Nothing of this shell's TF_ or CAPTF_ settings, no CLI config, no checkpoint call, and TF_IN_AUTOMATION
 * as a CI job running terraform sets it (the runner sets it too). No NODE_OPTIONS or NODE_EXTRA_CA_CERTS
 * either: the image sets neither, and Node 20 reads and parses the whole certificate file as it starts
 * when the latter is set (~70 ms, more than `node -e 0`).
 */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(TF_|CAPTF_)/.test(k) && k !== 'NODE_OPTIONS' && k !== 'NODE_EXTRA_CA_CERTS') env[k] = v;
  return { ...env, TF_CLI_CONFIG_FILE: '/dev/null', CHECKPOINT_DISABLE: '1', TF_IN_AUTOMATION: '1' };
}
