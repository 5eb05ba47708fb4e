// Writes the real terraform plan documents of test/fixtures/plans/terraform-1.11/: each is what
// `terraform show -json` printed on this machine's terraform for a module of the test catalogue,
// with the record the runner injects (captf_runner_inputs_hash.tf), planned over the state the
// first case applied. Run it only with the terraform the fixtures are named after, then
// regenerate the golden files (UPDATE_GOLDEN=1, test/plan/corpus.test.ts) and review the diff.
//
//   npx tsx scripts/generators/gen-plan-fixtures.ts
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  modules,
  replaceConfiguration,
  runTestTerraform,
  tempDir,
  writeTree,
  type FileTree,
} from '../../test/support/tf-modules.ts';
import { INPUTS_HASH_VARIABLE } from '../../src/workspace/reserved-names.ts';
import { emptyScan } from '../../src/workspace/scan.ts';
import { scanHcl } from '../../src/workspace/scan-hcl.ts';
import { inputsHashConfig } from '../../src/workspace/workspace.ts';

const OUT = new URL('../../test/fixtures/plans/terraform-1.11/', import.meta.url).pathname;
const HASH_1 = '1'.repeat(64);
const HASH_2 = '2'.repeat(64);

/** name, module, inputs hash, plan arguments. `create` is applied; every other case is planned over that state, never applied. */
const CASES: [string, FileTree, string, string[]][] = [
  ['create', modules.base, HASH_1, []],
  ['no-changes', modules.base, HASH_1, []],
  ['record-only', modules.base, HASH_2, []],
  ['update', modules.update, HASH_1, []],
  ['replace', modules.replace, HASH_1, []],
  ['replace-create-before-destroy', modules.replaceCreateBeforeDestroy, HASH_1, []],
  ['delete', modules.deleteByRemoval, HASH_1, []],
  ['forget', modules.forget, HASH_1, []],
  ['moved', modules.moved, HASH_1, []],
  ['import', modules.importBlock, HASH_1, []],
  ['output-only', modules.outputOnly, HASH_1, []],
  ['refresh-only', modules.base, HASH_1, ['-refresh-only']],
  ['destroy', modules.base, HASH_1, ['-destroy']],
];

const configOf = (tree: FileTree) => {
  const scan = emptyScan();
  for (const [path, text] of Object.entries(tree)) if (!path.includes('/')) scanHcl(text, scan, path);
  return inputsHashConfig(scan);
};

async function main() {
  const dir = await tempDir(undefined, 'captf-fixtures-');
  const must = async (args: string[]) => {
    const run = await runTestTerraform(dir, args);
    if (run.exitCode !== 0 && !(args[0] === 'plan' && run.exitCode === 2))
      throw new Error(`terraform ${args.join(' ')} exited ${run.exitCode}: ${run.stderr}`);
    return run.stdout;
  };
  await writeTree(dir, modules.base);
  for (const [name, tree, hash, extra] of CASES) {
    await replaceConfiguration(dir, tree);
    await writeFile(join(dir, 'captf_runner_inputs_hash.tf'), configOf(tree));
    await must(['init', '-input=false', '-no-color']);
    await must([
      'plan',
      '-input=false',
      '-no-color',
      '-detailed-exitcode',
      '-out=plan.tfplan',
      '-var',
      `${INPUTS_HASH_VARIABLE}=${hash}`,
      ...extra,
    ]);
    const shown = await must(['show', '-json', 'plan.tfplan']);
    await writeFile(join(OUT, `${name}__plan.json`), JSON.stringify(JSON.parse(shown), null, 2) + '\n');
    if (name === 'create') await must(['apply', '-input=false', '-no-color', 'plan.tfplan']);
    console.log(`${name}: written`);
  }
  await rm(dir, { recursive: true, force: true });
}

await main();
