#!/usr/bin/env node
// Captures what the real terraform prints for the failures the runner has to read, into
// test/fixtures/terraform-output/<case>/: command.json (argv, terraform version, exit code and what
// the case observed), stdout.txt, stderr.txt, and for plan and validate also the -json form
// (json-stdout.txt, json-stderr.txt, its argv and exit code in command.json).
//
//   node scripts/capture-terraform-output.mjs                  # every case (20-40 s)
//   node scripts/capture-terraform-output.mjs --case NAME ...  # only these cases
//   node scripts/capture-terraform-output.mjs --list           # the case names
//
// Each case builds a tiny module of terraform_data (no provider download) in a fresh temp dir laid
// out like the runner's workdir (root/ is the module and terraform's cwd, private/ holds the plan
// file and the variables files), runs its setup with terraform (which must succeed), then runs the
// captured command exactly as the runner does: an argument array (no shell), the argv of the
// runner's own builders (imported from src/terraform/*.ts, so test/terraform/corpus-argv.test.ts
// fails when the builders change and the corpus was not captured again), the runner's environment rules (TF_IN_AUTOMATION=1, TF_INPUT=0,
// CHECKPOINT_DISABLE=1) plus TF_CLI_CONFIG_FILE=/dev/null (or, where a case says so, the image's
// runner/terraformrc), with HOME in the temp dir and PATH, and nothing else of this environment.
// The temp dir's path is replaced by /WORKDIR (and a PostgreSQL port by PGPORT) so the files do not
// change with the machine's paths. The pg cases start a PostgreSQL 15 server with test/support/pg.ts.
// Terraform must be on PATH (or CAPTF_TERRAFORM names it).
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { tsImport } from 'tsx/esm/api';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const OUT_DIR = join(REPO, 'test', 'fixtures', 'terraform-output');
const TERRAFORM = process.env.CAPTF_TERRAFORM ?? 'terraform';
const WORKDIR_PLACEHOLDER = '/WORKDIR';
/** A command that has not exited by then is killed and recorded as timed out (none should come near it). */
const COMMAND_TIMEOUT_MS = 120_000;
/** How long a lock holder's provisioner sleeps: it is interrupted as soon as the capture is done. */
const HOLD_SECONDS = 120;
/** The state push cases set this lineage first, so terraform's refusals name the same lineage on every run. */
const FIXED_LINEAGE = '11111111-2222-4333-8444-555555555555';
const OTHER_LINEAGE = '99999999-8888-4777-8666-555555555555';
const SOME_LOCK_ID = '7c2b3a39-5a8e-4f71-9d61-3a0c4c1e2f00';

// ---- the runner's argv: its own builders (src/terraform/*.ts) -----------------------------------

const driver = async (file) => tsImport(`../src/terraform/${file}`, import.meta.url);
const [{ initArgs: runnerInitArgs }, { validateArgs }, { planArgs: runnerPlanArgs }, { applyArgs: runnerApplyArgs }, { statePullArgs, statePushArgs }, { forceUnlockArgs, lockProbeArgs }] = await Promise.all(
  ['init.ts', 'validate.ts', 'plan.ts', 'apply.ts', 'state.ts', 'lock.ts'].map(driver),
);

const initArgs = (options = {}) => runnerInitArgs(options);
/** The runner's validate is its -json form; the text form is captured beside it, for people. */
const validateJsonArgs = () => validateArgs();
const validateTextArgs = () => validateArgs().filter((arg) => arg !== '-json');
/** The runner's plan; `json` adds -json after -no-color (the corpus's second form, not the runner's). */
const planArgs = (w, { varFiles = [], lockTimeout, json = false, out = w.planFile } = {}) => {
  const argv = runnerPlanArgs({ out, varFiles, lockTimeout });
  return json ? [...argv.slice(0, 3), '-json', ...argv.slice(3)] : argv;
};
const applyArgs = (planFile) => runnerApplyArgs({ planFile });
/** The override the runner writes for the variables of sensitive.tfvars.json (src/workspace/workspace.ts). */
const { sensitiveOverrideConfig } = await tsImport('../src/workspace/workspace.ts', import.meta.url);

// ---- modules ------------------------------------------------------------------------------------

const hcl = (...lines) => `${lines.join('\n')}\n`;

/** The runner's backend for --state: a local backend with an absolute path (src/workspace/workspace.ts). */
const localBackend = (statePath) => hcl('terraform {', '  backend "local" {', `    path = ${JSON.stringify(statePath)}`, '  }', '}');
const pgBackend = hcl('terraform {', '  backend "pg" {}', '}');

/** One variable of `type` and one terraform_data whose input is `input`. */
const oneVariable = (name, type, input, { sensitive = false } = {}) =>
  hcl(`variable "${name}" {`, `  type = ${type}`, ...(sensitive ? ['  sensitive = true'] : []), '}', '', 'resource "terraform_data" "this" {', `  input = ${input}`, '}');

/** One terraform_data whose create-time local-exec runs `command` (a shell command, in an HCL string). */
const withProvisioner = (command) => hcl('resource "terraform_data" "this" {', '  input = "hello"', '', '  provisioner "local-exec" {', `    command = "${command}"`, '  }', '}');
const oneResource = hcl('resource "terraform_data" "this" {', '  input = "hello"', '}');
const versioned = oneVariable('round', 'number', 'var.round');
const requiresAws = hcl('terraform {', '  required_providers {', '    aws = { source = "hashicorp/aws" }', '  }', '}', '', oneResource.trimEnd());
const awsLockFile = hcl(
  'provider "registry.terraform.io/hashicorp/aws" {',
  '  version = "5.0.0"',
  '  hashes = [',
  '    "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",',
  '  ]',
  '}',
);
/** Applying it with hold_seconds > 0 holds the state lock for that long (the provisioner runs on create). */
const holder = hcl(
  'variable "hold_seconds" {',
  '  type = number',
  '}',
  '',
  'resource "terraform_data" "hold" {',
  '  triggers_replace = var.hold_seconds',
  '',
  '  provisioner "local-exec" {',
  '    command = "sleep ${var.hold_seconds}"',
  '  }',
  '}',
);

// ---- the cases ----------------------------------------------------------------------------------
// Each case's `run(w)` does its setup and calls w.capture(argv) once (and w.captureJson(argv) for
// the -json form); what it returns is recorded as `observed` in command.json.

const configurationErrors = {
  'syntax-unclosed-block': {
    what: 'a resource block without its closing brace',
    syntax: true,
    files: { 'main.tf': hcl('resource "terraform_data" "this" {', '  input = "hello"') },
  },
  'syntax-missing-value': {
    what: 'an argument without a value (input =)',
    syntax: true,
    files: { 'main.tf': hcl('resource "terraform_data" "this" {', '  input =', '}') },
  },
  'syntax-unterminated-string': {
    what: 'a string without its closing quote',
    syntax: true,
    files: { 'main.tf': hcl('resource "terraform_data" "this" {', '  input = "hello', '}') },
  },
  'syntax-stray-brace': {
    what: 'a closing brace that closes nothing',
    syntax: true,
    files: { 'main.tf': hcl('resource "terraform_data" "this" {', '  input = "hello"', '}', '}') },
  },
  'syntax-in-called-module': {
    what: 'a module calling a local module whose file does not parse',
    syntax: true,
    files: { 'main.tf': hcl('module "network" {', '  source = "./modules/network"', '}'), 'modules/network/main.tf': hcl('resource "terraform_data" "this" {', '  input =', '}') },
  },
  'invalid-reference': {
    what: 'a reference to a resource that is not declared',
    files: { 'main.tf': hcl('resource "terraform_data" "this" {', '  input = terraform_data.missing.output', '}') },
  },
  'undeclared-variable-reference': {
    what: 'a reference to a variable that is not declared',
    files: { 'main.tf': hcl('resource "terraform_data" "this" {', '  input = var.missing', '}') },
  },
  'unsupported-argument': {
    what: 'an argument terraform_data does not have (a typo of input)',
    files: { 'main.tf': hcl('resource "terraform_data" "this" {', '  inptu = "hello"', '}') },
  },
};

/** init, then validate in both forms (the text form for people, the -json form the runner reads). */
const validateAfterInit = async (w) => {
  await w.ok(w.initArgs);
  await w.capture(validateTextArgs());
  await w.captureJson(validateJsonArgs());
};

const CASES = [
  // init
  {
    name: 'init-ok',
    what: 'init of a module of terraform_data only (success)',
    files: { 'main.tf': oneResource },
    run: (w) => w.capture(initArgs()),
  },
  ...Object.entries(configurationErrors).map(([name, { what, files }]) => ({
    name: `init-${name}`,
    what: `init of ${what}`,
    files,
    run: (w) => w.capture(initArgs()),
  })),
  {
    name: 'init-provider-not-installable',
    what: 'init of a module requiring hashicorp/aws, with no CLI configuration and no network',
    files: { 'main.tf': requiresAws },
    run: (w) => w.capture(initArgs()),
  },
  {
    name: 'init-provider-not-installable-readonly-lockfile',
    what: 'the same with -lockfile=readonly (the runner passes it when the module ships .terraform.lock.hcl) and no lock file',
    files: { 'main.tf': requiresAws },
    run: (w) => w.capture(initArgs({ lockfileReadonly: true })),
  },
  {
    name: 'init-provider-not-in-image-mirror',
    what: 'init of a module requiring hashicorp/aws with the image\'s CLI configuration (runner/terraformrc: filesystem mirror only), the mirror empty',
    imageCliConfig: true,
    files: { 'main.tf': requiresAws },
    run: (w) => w.capture(initArgs()),
  },
  {
    name: 'init-provider-not-in-image-mirror-readonly-lockfile',
    what: 'the same with a shipped .terraform.lock.hcl (written by this script, hash made up) and -lockfile=readonly',
    imageCliConfig: true,
    files: { 'main.tf': requiresAws, '.terraform.lock.hcl': awsLockFile },
    run: (w) => w.capture(initArgs({ lockfileReadonly: true })),
  },
  {
    name: 'init-provider-in-image-mirror-readonly-lockfile-missing',
    what: 'init -lockfile=readonly of a module requiring hashicorp/aws, which the image\'s mirror holds, without a .terraform.lock.hcl: the provider installs, the lock file cannot record it',
    imageCliConfig: true,
    mirrorProviders: ['registry.terraform.io/hashicorp/aws/5.0.0'],
    files: { 'main.tf': requiresAws },
    run: (w) => w.capture(initArgs({ lockfileReadonly: true })),
  },
  {
    name: 'init-backend-unknown-type',
    what: 'init of a module whose backend block names a backend that does not exist',
    files: { 'main.tf': hcl('terraform {', '  backend "nonexistent" {}', '}', '', oneResource.trimEnd()) },
    run: (w) => w.capture(initArgs()),
  },
  {
    name: 'init-module-source-missing',
    what: 'init of a module calling a local module directory that does not exist',
    files: { 'main.tf': hcl('module "network" {', '  source = "./modules/network"', '}') },
    run: (w) => w.capture(initArgs()),
  },
  {
    name: 'init-module-registry-unreachable',
    what: 'init of a module calling a registry module, with no network',
    files: { 'main.tf': hcl('module "network" {', '  source  = "example-corp/network/aws"', '  version = "1.0.0"', '}') },
    run: (w) => w.capture(initArgs()),
  },

  // validate (after a successful init where init succeeds; a syntax error fails init, so validate runs without it)
  {
    name: 'validate-ok',
    what: 'validate of a valid module (success)',
    files: { 'main.tf': oneResource },
    run: validateAfterInit,
  },
  ...Object.entries(configurationErrors).map(([name, { what, files, syntax }]) => ({
    name: `validate-${name}`,
    what: `validate of ${what}`,
    files,
    run: async (w) => {
      if (!syntax) await w.ok(w.initArgs);
      await w.capture(validateTextArgs());
      await w.captureJson(validateJsonArgs());
    },
  })),

  // validate of what the runner's override makes sensitive (a variable of sensitive.tfvars.json)
  {
    name: 'validate-output-refers-to-sensitive-values',
    what: "validate of a root output that shows a variable of sensitive.tfvars.json, without sensitive = true (the runner's override marks the variable)",
    files: {
      'main.tf': hcl('variable "db_password" {', '  type = string', '}', '', 'output "database_url" {', '  value = "postgres://app:${urlencode(var.db_password)}@db:5432/app"', '}'),
      'captf_runner_sensitive_override.tf.json': sensitiveOverrideConfig(['db_password']),
    },
    run: validateAfterInit,
  },
  {
    name: 'validate-for-each-sensitive',
    what: "validate of a for_each over a variable of sensitive.tfvars.json (the runner's override marks it sensitive)",
    files: {
      'main.tf': hcl('variable "users" {', '  type = map(string)', '}', '', 'resource "terraform_data" "user" {', '  for_each = var.users', '  input    = each.value', '}'),
      'captf_runner_sensitive_override.tf.json': sensitiveOverrideConfig(['users']),
    },
    run: validateAfterInit,
  },

  // plan
  {
    name: 'plan-create',
    what: 'plan of one new resource (success: exit 2, changes)',
    files: { 'main.tf': oneResource },
    run: (w) => w.capturePlan(),
  },
  {
    name: 'plan-no-changes',
    what: 'plan over an applied module (success: exit 0, no changes)',
    files: { 'main.tf': oneResource },
    run: async (w) => {
      await w.applyOnce();
      return w.capturePlan();
    },
  },
  {
    name: 'plan-variable-missing',
    what: 'plan of a module whose required variable has no value',
    files: { 'main.tf': oneVariable('replicas', 'number', 'var.replicas') },
    run: (w) => w.capturePlan(),
  },
  {
    name: 'plan-variable-wrong-type-number',
    what: 'plan with a variables file giving a string where a number is declared',
    files: { 'main.tf': oneVariable('replicas', 'number', 'var.replicas') },
    run: async (w) => w.capturePlan({ varFiles: [await w.varFile({ replicas: 'three' })] }),
  },
  {
    name: 'plan-variable-wrong-type-list',
    what: 'plan with a variables file giving a list where a string is declared',
    files: { 'main.tf': oneVariable('cluster_name', 'string', 'var.cluster_name') },
    run: async (w) => w.capturePlan({ varFiles: [await w.varFile({ cluster_name: ['a', 'b'] })] }),
  },
  {
    name: 'plan-variable-wrong-type-sensitive',
    what: 'plan with a variables file giving a string where a sensitive number is declared (is the value printed?)',
    files: { 'main.tf': oneVariable('pin', 'number', 'var.pin', { sensitive: true }) },
    run: (w) => w.capturePlanWithSecret('pin', 'S3CRET-PIN-VALUE'),
  },
  {
    name: 'plan-variable-wrong-type-from-sensitive-file',
    what: 'the same wrong type for a variable not declared sensitive, its value from the runner\'s sensitive.tfvars.json (is the value printed?)',
    files: { 'main.tf': oneVariable('pin', 'number', 'var.pin') },
    run: (w) => w.capturePlanWithSecret('pin', 'S3CRET-PIN-VALUE', 'sensitive.tfvars.json'),
  },
  {
    name: 'plan-variable-validation-failed',
    what: 'plan with a value that the variable\'s validation block rejects',
    files: {
      'main.tf': hcl(
        'variable "replicas" {',
        '  type = number',
        '  validation {',
        '    condition     = var.replicas >= 1',
        '    error_message = "replicas must be at least 1."',
        '  }',
        '}',
        '',
        'resource "terraform_data" "this" {',
        '  input = var.replicas',
        '}',
      ),
    },
    run: async (w) => w.capturePlan({ varFiles: [await w.varFile({ replicas: 0 })] }),
  },
  {
    name: 'plan-variable-undeclared',
    what: 'plan with a variables file that sets a variable the module does not declare (a typo)',
    files: { 'main.tf': hcl('variable "node_count" {', '  type    = number', '  default = 1', '}', '', 'resource "terraform_data" "this" {', '  input = var.node_count', '}') },
    run: async (w) => w.capturePlan({ varFiles: [await w.varFile({ nodecount: 3 })] }),
  },
  {
    name: 'plan-precondition-failed',
    what: 'plan of a resource whose precondition is false',
    files: {
      'main.tf': hcl(
        'variable "greeting" {',
        '  type    = string',
        '  default = "hello"',
        '}',
        '',
        'resource "terraform_data" "this" {',
        '  input = var.greeting',
        '',
        '  lifecycle {',
        '    precondition {',
        '      condition     = length(var.greeting) > 10',
        '      error_message = "The greeting must be longer than 10 characters."',
        '    }',
        '  }',
        '}',
      ),
    },
    run: (w) => w.capturePlan(),
  },
  {
    name: 'plan-prevent-destroy-replace',
    what: 'plan that replaces a resource with lifecycle.prevent_destroy (triggers_replace changed)',
    files: { 'main.tf': preventDestroyModule() },
    run: async (w) => {
      await w.applyOnce({ varFiles: [await w.varFile({ round: 1 })] });
      return w.capturePlan({ varFiles: [await w.varFile({ round: 2 })] });
    },
  },
  {
    name: 'plan-evaluation-error',
    what: 'an errored plan: a function call that fails only with the value of a variable (validate cannot see it)',
    files: { 'main.tf': oneVariable('replicas', 'string', 'tonumber(var.replicas)') },
    run: async (w) => w.capturePlan({ varFiles: [await w.varFile({ replicas: 'three' })] }),
  },
  {
    name: 'plan-evaluation-error-sensitive',
    what: 'the same errored plan with the variable declared sensitive (is the value printed?)',
    files: { 'main.tf': oneVariable('replicas', 'string', 'tonumber(var.replicas)', { sensitive: true }) },
    run: (w) => w.capturePlanWithSecret('replicas', 'S3CRET-REPLICAS'),
  },

  // apply
  {
    name: 'apply-ok',
    what: 'apply of a saved plan (success)',
    files: { 'main.tf': oneResource },
    run: (w) => w.captureApplyOfNewPlan(),
  },
  {
    name: 'apply-stale-plan',
    what: 'apply of a saved plan after another apply changed the state',
    files: { 'main.tf': versioned },
    run: async (w) => {
      await w.applyOnce({ varFiles: [await w.varFile({ round: 1 })] });
      await w.ok(planArgs(w, { varFiles: [await w.varFile({ round: 2 })] }), [2]);
      const other = join(w.privateDir, 'other.tfplan');
      await w.ok(planArgs(w, { out: other, varFiles: [await w.varFile({ round: 3 })] }), [2]);
      await w.ok(applyArgs(other));
      await w.capture(applyArgs(w.planFile));
    },
  },
  {
    name: 'apply-not-a-plan',
    what: 'apply of a file that is not a plan file',
    files: { 'main.tf': oneResource },
    run: async (w) => {
      await w.ok(w.initArgs);
      await writeFile(w.planFile, 'this is not a terraform plan\n');
      await w.capture(applyArgs(w.planFile));
    },
  },
  {
    name: 'apply-errored-plan',
    what: 'apply of the plan file an errored plan wrote (prevent_destroy with a replace)',
    files: { 'main.tf': preventDestroyModule() },
    run: async (w) => {
      await w.applyOnce({ varFiles: [await w.varFile({ round: 1 })] });
      await w.ok(planArgs(w, { varFiles: [await w.varFile({ round: 2 })] }), [1]);
      await w.capture(applyArgs(w.planFile));
    },
  },
  {
    name: 'apply-provisioner-failed',
    what: 'apply of a terraform_data whose create-time local-exec exits 1',
    files: { 'main.tf': withProvisioner('echo provisioning; exit 1') },
    run: (w) => w.captureApplyOfNewPlan(),
  },
  {
    name: 'apply-provisioner-prints-terraform-errors',
    what: 'apply of a terraform_data whose local-exec prints what terraform prints for a stale plan and a held lock, then exits 1: what a module can make stderr say',
    files: {
      'main.tf': withProvisioner(
        "printf '%s\\\\n' 'Error: Saved plan is stale' '' 'Error: Error acquiring the state lock' '' 'Lock Info:' '  ID:        forged-lock-id' '  Who:       mallory@module'; exit 1",
      ),
    },
    run: (w) => w.captureApplyOfNewPlan(),
  },

  // locks, local backend (the runner's --state)
  {
    name: 'lock-local-held-plan',
    what: 'plan -lock-timeout=0s while another apply holds the local state lock',
    files: (w) => ({ 'main.tf': holder, 'backend.tf': localBackend(w.statePath) }),
    run: (w) => w.whileLocked('local', () => w.capturePlan({ lockTimeout: '0s', varFiles: [w.holdVarFile] })),
  },
  {
    name: 'lock-local-held-probe',
    what: 'the runner\'s lock probe (state rm -dry-run of an address no module has) while another apply holds the local lock',
    files: (w) => ({ 'main.tf': holder, 'backend.tf': localBackend(w.statePath) }),
    run: (w) => w.whileLocked('local', () => w.capture(lockProbeArgs())),
  },
  {
    name: 'lock-local-probe-free',
    what: 'the lock probe when nobody holds the lock (success: what the probe prints and the runner ignores)',
    files: (w) => ({ 'main.tf': holder, 'backend.tf': localBackend(w.statePath) }),
    run: async (w) => {
      await w.applyOnce({ varFiles: [await w.varFile({ hold_seconds: 0 })] });
      await w.capture(lockProbeArgs());
    },
  },
  {
    name: 'lock-local-probe-no-state',
    what: 'the lock probe before any state exists (success or not: what the runner ignores)',
    files: (w) => ({ 'main.tf': oneResource, 'backend.tf': localBackend(w.statePath) }),
    run: async (w) => {
      await w.ok(w.initArgs);
      await w.capture(lockProbeArgs());
    },
  },
  {
    name: 'force-unlock-local-not-locked',
    what: 'force-unlock of a local state nobody holds',
    files: (w) => ({ 'main.tf': oneResource, 'backend.tf': localBackend(w.statePath) }),
    run: async (w) => {
      await w.applyOnce();
      await w.capture(forceUnlockArgs(SOME_LOCK_ID));
    },
  },
  {
    name: 'force-unlock-local-held',
    what: 'force-unlock with the holder\'s own lock id while a live apply holds the local lock',
    files: (w) => ({ 'main.tf': holder, 'backend.tf': localBackend(w.statePath) }),
    run: (w) =>
      w.whileLocked('local', async () => {
        const info = JSON.parse(await readFile(w.localLockInfo, 'utf8'));
        await w.capture(forceUnlockArgs(info.ID));
        return { lockInfoStillPresent: existsSync(w.localLockInfo) };
      }),
  },

  // locks, pg backend
  {
    name: 'lock-pg-held-plan',
    what: 'plan -lock-timeout=0s while another apply holds the pg advisory lock of an existing workspace',
    files: { 'main.tf': holder, 'backend.tf': pgBackend },
    pg: true,
    run: (w) => w.whileLocked('pg', () => w.capturePlan({ lockTimeout: '0s', varFiles: [w.holdVarFile] })),
  },
  {
    name: 'lock-pg-held-probe',
    what: 'the runner\'s lock probe while another apply holds the pg advisory lock',
    files: { 'main.tf': holder, 'backend.tf': pgBackend },
    pg: true,
    run: (w) => w.whileLocked('pg', () => w.capture(lockProbeArgs())),
  },
  {
    name: 'lock-pg-creating-plan',
    what: 'plan -lock-timeout=0s while the first apply of a new pg workspace holds the lock',
    files: { 'main.tf': holder, 'backend.tf': pgBackend },
    pg: true,
    run: (w) => w.whileLocked('pg', () => w.capturePlan({ lockTimeout: '0s', varFiles: [w.holdVarFile] }), { fresh: true }),
  },
  {
    name: 'force-unlock-pg-held',
    what: 'force-unlock while a live apply holds the pg advisory lock (does terraform release it?)',
    files: { 'main.tf': holder, 'backend.tf': pgBackend },
    pg: true,
    run: (w) =>
      w.whileLocked('pg', async () => {
        await w.capture(forceUnlockArgs(SOME_LOCK_ID));
        const locks = await w.pg.server.advisoryLocks(w.pg.database);
        return { advisoryLockStillHeld: locks.some((lock) => lock.granted) };
      }),
  },

  // state pull (local backend)
  {
    name: 'state-pull-unreadable-state',
    what: 'state pull of a local state file that is not a state (the runner pulls before and after every change)',
    files: (w) => ({ 'main.tf': oneResource, 'backend.tf': localBackend(w.statePath) }),
    run: async (w) => {
      await w.applyOnce();
      await writeFile(w.statePath, 'this is not a state\n');
      await w.capture(statePullArgs());
    },
  },

  // state push (local backend, as --state and restore use it)
  ...[
    { name: 'state-push-identical', what: 'state push of the current state itself (success)', edit: (s) => s },
    { name: 'state-push-higher-serial', what: 'state push of the same lineage with a higher serial (success)', edit: (s) => ({ ...s, serial: s.serial + 5 }) },
    { name: 'state-push-lower-serial', what: 'state push of the same lineage with a lower serial', edit: (s) => ({ ...s, serial: s.serial - 1 }) },
    {
      name: 'state-push-same-serial-different',
      what: 'state push of the same lineage and serial with different content',
      edit: (s) => ({ ...s, outputs: { ...s.outputs, pushed: { value: 'different', type: 'string' } } }),
    },
    { name: 'state-push-other-lineage', what: 'state push of a state of another lineage (higher serial)', edit: (s) => ({ ...s, lineage: OTHER_LINEAGE, serial: s.serial + 1 }) },
    { name: 'state-push-not-json', what: 'state push of a file that is not a state', raw: 'this is not a state\n' },
  ].map(({ name, what, edit, raw }) => ({
    name,
    what,
    files: (w) => ({ 'main.tf': versioned, 'backend.tf': localBackend(w.statePath) }),
    run: async (w) => {
      const current = await w.stateWithFixedLineage();
      const file = join(w.privateDir, 'push.tfstate');
      await writeFile(file, raw ?? `${JSON.stringify(edit(current), null, 2)}\n`);
      await w.capture(statePushArgs(file));
      const after = JSON.parse(await readFile(w.statePath, 'utf8'));
      return { serialBefore: current.serial, serialAfter: after.serial, lineageAfter: after.lineage };
    },
  })),
];

function preventDestroyModule() {
  return hcl(
    'variable "round" {',
    '  type = number',
    '}',
    '',
    'resource "terraform_data" "this" {',
    '  triggers_replace = var.round',
    '',
    '  lifecycle {',
    '    prevent_destroy = true',
    '  }',
    '}',
  );
}

// ---- running terraform ----------------------------------------------------------------------------

class Workdir {
  constructor(dir, testCase, context) {
    this.dir = dir;
    this.case = testCase;
    this.context = context;
    this.root = join(dir, 'root');
    this.privateDir = join(dir, 'private');
    this.home = join(dir, 'home');
    this.statePath = join(dir, 'state', 'terraform.tfstate');
    this.localLockInfo = join(dir, 'state', '.terraform.tfstate.lock.info');
    this.planFile = join(this.privateDir, 'plan.tfplan');
    /** [text, placeholder]: what differs from machine to machine, replaced in everything written. */
    this.redactions = [[dir, WORKDIR_PLACEHOLDER]];
    this.captured = undefined;
    this.capturedJson = undefined;
  }

  async prepare() {
    for (const sub of [this.root, this.privateDir, this.home, dirname(this.statePath)]) await mkdir(sub, { recursive: true });
    const files = typeof this.case.files === 'function' ? this.case.files(this) : this.case.files;
    for (const [name, content] of Object.entries(files)) {
      await mkdir(dirname(join(this.root, name)), { recursive: true });
      await writeFile(join(this.root, name), content);
    }
    if (this.case.imageCliConfig) {
      // The image's CLI configuration (runner/terraformrc) with its mirror dir here, and empty.
      this.mirrorDir = join(this.dir, 'plugins');
      await mkdir(this.mirrorDir);
      const config = (await readFile(join(REPO, 'runner', 'terraformrc'), 'utf8')).replace('/usr/share/terraform/plugins', this.mirrorDir);
      if (config.indexOf(this.mirrorDir) < 0) throw new Error('runner/terraformrc no longer names /usr/share/terraform/plugins: update this script');
      this.cliConfigFile = join(this.dir, 'terraformrc');
      await writeFile(this.cliConfigFile, config);
      // A provider in the mirror's unpacked layout: init installs it without running it, so any executable will do.
      for (const provider of this.case.mirrorProviders ?? []) {
        const [host, namespace, type, version] = provider.split('/');
        const dir = join(this.mirrorDir, host, namespace, type, version, 'linux_amd64');
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, `terraform-provider-${type}_v${version}`), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
      }
    }
    if (this.case.pg) {
      const server = await this.context.postgres();
      const database = `capture_${this.case.name.replace(/-/g, '_')}`;
      const connString = await server.createDatabase(database);
      this.pg = { server, database };
      this.redactions.push([`127.0.0.1:${server.port}`, '127.0.0.1:PGPORT']);
      // Like the runner: the backend settings come as a -backend-config file.
      this.backendConfig = join(this.privateDir, 'backend.hcl');
      await writeFile(this.backendConfig, `conn_str = ${JSON.stringify(connString)}\n`);
    }
  }

  get initArgs() {
    return initArgs(this.backendConfig ? { backendConfigs: [this.backendConfig] } : {});
  }

  env() {
    // The runner's environment rules; HOME is the case's own, so nothing of this machine's
    // ~/.terraform.d (plugin dirs, credentials) takes part.
    return {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: this.home,
      TF_IN_AUTOMATION: '1',
      TF_INPUT: '0',
      CHECKPOINT_DISABLE: '1',
      TF_CLI_CONFIG_FILE: this.cliConfigFile ?? '/dev/null',
    };
  }

  start(argv) {
    return execa(TERRAFORM, argv, {
      cwd: this.root,
      env: this.env(),
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      detached: true, // its own process group, so whatever local-exec left behind can be ended with it
      timeout: COMMAND_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      stripFinalNewline: false,
      encoding: 'utf8',
    });
  }

  async run(argv) {
    const started = Date.now();
    const child = this.start(argv);
    const result = await child;
    killGroup(child.pid);
    return { exitCode: result.exitCode ?? null, timedOut: result.timedOut === true, stdout: result.stdout ?? '', stderr: result.stderr ?? '', ms: Date.now() - started };
  }

  /** A setup step: it must exit with one of `exits`, or the case fails with terraform's output. */
  async ok(argv, exits = [0]) {
    const result = await this.run(argv);
    if (!exits.includes(result.exitCode)) {
      throw new Error(`setup step terraform ${argv.join(' ')} exited ${result.exitCode} (expected ${exits.join(' or ')}):\n${result.stdout}${result.stderr}`);
    }
    if (argv[0] === 'init') this.initialized = true;
    return result;
  }

  async capture(argv) {
    if (this.captured) throw new Error(`case ${this.case.name} captures more than one command`);
    this.captured = { argv, ...(await this.run(argv)) };
  }

  async captureJson(argv) {
    if (this.capturedJson) throw new Error(`case ${this.case.name} captures more than one -json command`);
    this.capturedJson = { argv, ...(await this.run(argv)) };
  }

  /** init (unless done), then plan (text and -json, the latter to a second plan file): records whether the text plan wrote its plan file. */
  async capturePlan(options = {}) {
    if (!this.initialized) await this.ok(this.initArgs);
    await this.capture(planArgs(this, options));
    const planFileWritten = existsSync(this.planFile);
    await this.captureJson(planArgs(this, { ...options, json: true, out: join(this.privateDir, 'plan-json.tfplan') }));
    return { planFileWritten };
  }

  /** capturePlan with `secret` as the value of `variable` in a variables file: records whether terraform printed it (either form). */
  async capturePlanWithSecret(variable, secret, fileName = 'terraform.tfvars.json') {
    const observed = await this.capturePlan({ varFiles: [await this.varFile({ [variable]: secret }, fileName)] });
    const valuePrinted = [this.captured, this.capturedJson].some((run) => run.stdout.includes(secret) || run.stderr.includes(secret));
    return { ...observed, valuePrinted };
  }

  /** init, a plan with changes, then the captured apply of it. */
  async captureApplyOfNewPlan() {
    await this.ok(this.initArgs);
    await this.ok(planArgs(this), [2]);
    await this.capture(applyArgs(this.planFile));
  }

  /** Writes a variables file into private/ as the runner does (terraform.tfvars.json), or under another name. */
  async varFile(values, name = 'terraform.tfvars.json') {
    const path = join(this.privateDir, name);
    await writeFile(path, `${JSON.stringify(values, null, 2)}\n`);
    return path;
  }

  /** init, plan (changes expected) and apply of the saved plan: the runner's way to apply. */
  async applyOnce({ varFiles = [] } = {}) {
    if (!this.initialized) await this.ok(this.initArgs);
    const setupPlan = join(this.privateDir, 'setup.tfplan');
    await this.ok(planArgs(this, { varFiles, out: setupPlan }), [2]);
    await this.ok(applyArgs(setupPlan));
  }

  /** Applies the module twice (serial > 1), then gives the local state the fixed lineage. */
  async stateWithFixedLineage() {
    await this.applyOnce({ varFiles: [await this.varFile({ round: 1 })] });
    await this.applyOnce({ varFiles: [await this.varFile({ round: 2 })] });
    const state = JSON.parse(await readFile(this.statePath, 'utf8'));
    state.lineage = FIXED_LINEAGE;
    await writeFile(this.statePath, `${JSON.stringify(state, null, 2)}\n`);
    return state;
  }

  /**
   * Runs `body` while another terraform apply holds the state lock: the holder's local-exec sleeps,
   * and is interrupted (one SIGINT, as the runner stops terraform) once body is done. Except with
   * `fresh`, the workspace exists first (applied with a zero sleep).
   */
  async whileLocked(backend, body, { fresh = false } = {}) {
    this.holdVarFile = await this.varFile({ hold_seconds: HOLD_SECONDS }, 'hold.tfvars.json');
    if (!fresh) await this.applyOnce({ varFiles: [await this.varFile({ hold_seconds: 0 })] });
    else await this.ok(this.initArgs);
    const holdPlan = join(this.privateDir, 'hold.tfplan');
    await this.ok(planArgs(this, { varFiles: [this.holdVarFile], out: holdPlan }), [2]);
    const holderRun = this.start(applyArgs(holdPlan));
    try {
      await waitUntil(async () => {
        if (holderRun.exitCode !== undefined && holderRun.exitCode !== null) throw new Error(`the lock holder exited ${holderRun.exitCode} before it held the lock`);
        if (backend === 'local') return existsSync(this.localLockInfo) && (await processChildren(holderRun.pid)).length > 0;
        return (await this.pg.server.advisoryLocks(this.pg.database)).some((lock) => lock.granted) && (await processChildren(holderRun.pid)).length > 0;
      }, `the ${backend} state lock to be held`);
      const observed = (await body()) ?? {};
      if (backend === 'local' && this.captured.stderr.includes('Lock Info:')) {
        // lock.ts takes the printed ID for the holder's: check that it is the one in the holder's lock info.
        const holderId = JSON.parse(await readFile(this.localLockInfo, 'utf8')).ID;
        observed.printedLockIdIsHolders = this.captured.stderr.includes(`ID:        ${holderId}`);
      }
      return observed;
    } finally {
      try {
        process.kill(holderRun.pid, 'SIGINT');
      } catch {
        // already gone
      }
      await holderRun;
      killGroup(holderRun.pid);
    }
  }
}

function killGroup(pid) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is gone
  }
}

/** The pids whose parent is `pid` (Linux /proc): the holder is sleeping once its provisioner runs. */
async function processChildren(pid) {
  const children = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(entry));
    } catch {
      // it exited while we looked
    }
  }
  return children;
}

async function waitUntil(condition, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ---- writing the corpus ---------------------------------------------------------------------------

const redact = (text, redactions) => redactions.reduce((out, [from, to]) => out.split(from).join(to), text);

async function writeCase(w, version, observed) {
  const dir = join(OUT_DIR, w.case.name);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const r = (text) => redact(text, w.redactions);
  const { captured, capturedJson } = w;
  const command = {
    case: w.case.name,
    what: w.case.what,
    terraformVersion: version,
    cwd: r(w.root),
    env: Object.fromEntries(Object.entries(w.env()).filter(([name]) => name !== 'PATH').map(([name, value]) => [name, r(value)])),
    argv: captured.argv.map(r),
    exitCode: captured.exitCode,
    ...(captured.timedOut ? { timedOut: true } : {}),
    ...(capturedJson ? { json: { argv: capturedJson.argv.map(r), exitCode: capturedJson.exitCode, ...(capturedJson.timedOut ? { timedOut: true } : {}) } } : {}),
    ...(observed && Object.keys(observed).length > 0 ? { observed } : {}),
  };
  await writeFile(join(dir, 'command.json'), `${JSON.stringify(command, null, 2)}\n`);
  await writeFile(join(dir, 'stdout.txt'), r(captured.stdout));
  await writeFile(join(dir, 'stderr.txt'), r(captured.stderr));
  if (capturedJson) {
    await writeFile(join(dir, 'json-stdout.txt'), r(capturedJson.stdout));
    await writeFile(join(dir, 'json-stderr.txt'), r(capturedJson.stderr));
  }
}

/** terraform's first `Error:` or `Warning:` line, else the last line: the summary printed per case. */
function keyLine({ stdout, stderr }) {
  const lines = `${stderr}\n${stdout}`.split('\n').map((line) => line.trim());
  return lines.find((line) => /^Error:/.test(line)) ?? lines.find((line) => /^Warning:/.test(line)) ?? lines.filter(Boolean).at(-1) ?? '';
}

async function terraformVersion() {
  const { stdout } = await execa(TERRAFORM, ['version', '-json'], { env: { PATH: process.env.PATH, CHECKPOINT_DISABLE: '1', TF_CLI_CONFIG_FILE: '/dev/null' }, extendEnv: false });
  return JSON.parse(stdout).terraform_version;
}

async function main() {
  const { values } = parseArgs({ options: { case: { type: 'string', multiple: true }, list: { type: 'boolean' } } });
  if (values.list) {
    for (const c of CASES) console.log(c.name);
    return;
  }
  const names = new Set(CASES.map((c) => c.name));
  if (names.size !== CASES.length) throw new Error('two cases have the same name');
  const unknown = (values.case ?? []).filter((name) => !names.has(name));
  if (unknown.length > 0) throw new Error(`unknown case(s): ${unknown.join(', ')} (see --list)`);
  const selected = values.case ? CASES.filter((c) => values.case.includes(c.name)) : CASES;

  const version = await terraformVersion();
  const started = Date.now();
  const base = await realpath(await mkdtemp(join(tmpdir(), 'captf-capture-')));
  let postgres;
  const context = {
    postgres: async () => {
      postgres ??= (async () => {
        const { startPostgres } = await tsImport('../test/support/pg.ts', import.meta.url);
        return startPostgres();
      })();
      return postgres;
    },
  };
  console.log(`terraform ${version}; ${selected.length} case(s) into ${OUT_DIR}`);
  try {
    for (const testCase of selected) {
      const w = new Workdir(join(base, testCase.name), testCase, context);
      await w.prepare();
      const observed = await testCase.run(w);
      if (!w.captured) throw new Error(`case ${testCase.name} captured nothing`);
      await writeCase(w, version, observed);
      const json = w.capturedJson ? ` (-json: ${w.capturedJson.exitCode})` : '';
      console.log(`${testCase.name.padEnd(48)} exit ${w.captured.exitCode}${json}${w.captured.timedOut ? ' TIMED OUT' : ''}  ${w.captured.ms} ms  ${redact(keyLine(w.captured), w.redactions)}`);
    }
    if (!values.case) {
      // A full run is the whole corpus: remove the dirs of cases that no longer exist.
      for (const entry of await readdir(OUT_DIR, { withFileTypes: true })) {
        if (entry.isDirectory() && !names.has(entry.name)) await rm(join(OUT_DIR, entry.name), { recursive: true, force: true });
      }
    }
  } finally {
    if (postgres) await (await postgres.catch(() => undefined))?.stop();
    await rm(base, { recursive: true, force: true });
  }
  console.log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

await main();
