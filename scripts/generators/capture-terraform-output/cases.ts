// The cases of the capture of what the real terraform prints (scripts/generators/capture-terraform-output.ts runs
// them): each builds a tiny module of terraform_data (no provider download), does its setup with
// terraform (which must succeed), and captures one command (and its -json form) exactly as the runner
// runs it: the argv of the runner's own builders (src/terraform/*.ts), so
// test/terraform/corpus-argv.test.ts fails when a builder changes and the corpus was not captured again.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { forceUnlockArgs, lockProbeArgs } from '../../../src/terraform/lock.ts';
import { statePullArgs, statePushArgs } from '../../../src/terraform/state.ts';
import { sensitiveOverrideConfig } from '../../../src/workspace/workspace.ts';
import {
  applyArgs,
  initArgs,
  planArgs,
  validateJsonArgs,
  validateTextArgs,
  type CaptureCase,
  type StateFile,
  type Workdir,
} from './workdir.ts';

const OTHER_LINEAGE = '99999999-8888-4777-8666-555555555555';
const SOME_LOCK_ID = '7c2b3a39-5a8e-4f71-9d61-3a0c4c1e2f00';

// ---- modules ------------------------------------------------------------------------------------

const hcl = (...lines: string[]) => `${lines.join('\n')}\n`;

/** The runner's backend for --state: a local backend with an absolute path (src/workspace/workspace.ts). */
const localBackend = (statePath: string) =>
  hcl('terraform {', '  backend "local" {', `    path = ${JSON.stringify(statePath)}`, '  }', '}');
const pgBackend = hcl('terraform {', '  backend "pg" {}', '}');

/** One variable of `type` and one terraform_data whose input is `input`. */
const oneVariable = (name: string, type: string, input: string, { sensitive = false } = {}) =>
  hcl(
    `variable "${name}" {`,
    `  type = ${type}`,
    ...(sensitive ? ['  sensitive = true'] : []),
    '}',
    '',
    'resource "terraform_data" "this" {',
    `  input = ${input}`,
    '}',
  );

/** One terraform_data whose create-time local-exec runs `command` (a shell command, in an HCL string). */
const withProvisioner = (command: string) =>
  hcl(
    'resource "terraform_data" "this" {',
    '  input = "hello"',
    '',
    '  provisioner "local-exec" {',
    `    command = "${command}"`,
    '  }',
    '}',
  );
const oneResource = hcl('resource "terraform_data" "this" {', '  input = "hello"', '}');
const versioned = oneVariable('round', 'number', 'var.round');
const requiresAws = hcl(
  'terraform {',
  '  required_providers {',
  '    aws = { source = "hashicorp/aws" }',
  '  }',
  '}',
  '',
  oneResource.trimEnd(),
);
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

const configurationErrors: Record<string, { what: string; syntax?: boolean; files: Record<string, string> }> = {
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
    files: {
      'main.tf': hcl('module "network" {', '  source = "./modules/network"', '}'),
      'modules/network/main.tf': hcl('resource "terraform_data" "this" {', '  input =', '}'),
    },
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
const validateAfterInit = async (w: Workdir) => {
  await w.ok(w.initArgs);
  await w.capture(validateTextArgs());
  await w.captureJson(validateJsonArgs());
};

export const CASES: CaptureCase[] = [
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
    run: (w: Workdir) => w.capture(initArgs()),
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
    what: "init of a module requiring hashicorp/aws with the image's CLI configuration (runner/terraformrc: filesystem mirror only), the mirror empty",
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
    what: "init -lockfile=readonly of a module requiring hashicorp/aws, which the image's mirror holds, without a .terraform.lock.hcl: the provider installs, the lock file cannot record it",
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
    files: {
      'main.tf': hcl('module "network" {', '  source  = "example-corp/network/aws"', '  version = "1.0.0"', '}'),
    },
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
    run: async (w: Workdir) => {
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
      'main.tf': hcl(
        'variable "db_password" {',
        '  type = string',
        '}',
        '',
        'output "database_url" {',
        '  value = "postgres://app:${urlencode(var.db_password)}@db:5432/app"',
        '}',
      ),
      'captf_runner_sensitive_override.tf.json': sensitiveOverrideConfig(['db_password']),
    },
    run: validateAfterInit,
  },
  {
    name: 'validate-for-each-sensitive',
    what: "validate of a for_each over a variable of sensitive.tfvars.json (the runner's override marks it sensitive)",
    files: {
      'main.tf': hcl(
        'variable "users" {',
        '  type = map(string)',
        '}',
        '',
        'resource "terraform_data" "user" {',
        '  for_each = var.users',
        '  input    = each.value',
        '}',
      ),
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
    what: "the same wrong type for a variable not declared sensitive, its value from the runner's sensitive.tfvars.json (is the value printed?)",
    files: { 'main.tf': oneVariable('pin', 'number', 'var.pin') },
    run: (w) => w.capturePlanWithSecret('pin', 'S3CRET-PIN-VALUE', 'sensitive.tfvars.json'),
  },
  {
    name: 'plan-variable-validation-failed',
    what: "plan with a value that the variable's validation block rejects",
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
    files: {
      'main.tf': hcl(
        'variable "node_count" {',
        '  type    = number',
        '  default = 1',
        '}',
        '',
        'resource "terraform_data" "this" {',
        '  input = var.node_count',
        '}',
      ),
    },
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
    name: 'plan-precondition-failed-local',
    what: 'plan of a resource whose precondition, false, reads a local value beside a variable',
    files: {
      'main.tf': hcl(
        'variable "greeting" {',
        '  type = string',
        '}',
        '',
        'locals {',
        '  shout = upper(var.greeting)',
        '}',
        '',
        'resource "terraform_data" "this" {',
        '  input = var.greeting',
        '',
        '  lifecycle {',
        '    precondition {',
        '      condition     = length(local.shout) > 10',
        '      error_message = "The greeting must be longer than 10 characters."',
        '    }',
        '  }',
        '}',
      ),
    },
    run: async (w) => w.capturePlan({ varFiles: [await w.varFile({ greeting: 'hello' })] }),
  },
  {
    name: 'plan-file-not-shipped',
    what: 'plan of a module whose file() names, by a variable, a file the module does not ship (validate cannot see it)',
    files: {
      'main.tf': hcl(
        'variable "role" {',
        '  type = string',
        '}',
        '',
        'resource "terraform_data" "this" {',
        '  input = file("${path.module}/scripts/${var.role}.sh")',
        '}',
      ),
      'scripts/control-plane.sh': 'echo control plane\n',
    },
    run: async (w) => w.capturePlan({ varFiles: [await w.varFile({ role: 'worker' })] }),
  },
  {
    name: 'plan-file-not-shipped-by-module',
    what: 'plan of a module whose file() names, by its own for_each keys, a file it does not ship (validate cannot see it)',
    files: {
      'main.tf': hcl(
        'resource "terraform_data" "this" {',
        '  for_each = toset(["control-plane", "worker"])',
        '  input    = file("${path.module}/scripts/${each.key}.sh")',
        '}',
      ),
      'scripts/control-plane.sh': 'echo control plane\n',
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
    what: "the runner's lock probe (state rm -dry-run of an address no module has) while another apply holds the local lock",
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
    what: "force-unlock with the holder's own lock id while a live apply holds the local lock",
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
    what: "the runner's lock probe while another apply holds the pg advisory lock",
    files: { 'main.tf': holder, 'backend.tf': pgBackend },
    pg: true,
    run: (w) => w.whileLocked('pg', () => w.capture(lockProbeArgs())),
  },
  {
    name: 'lock-pg-creating-plan',
    what: 'plan -lock-timeout=0s while the first apply of a new pg workspace holds the lock',
    files: { 'main.tf': holder, 'backend.tf': pgBackend },
    pg: true,
    run: (w) =>
      w.whileLocked('pg', () => w.capturePlan({ lockTimeout: '0s', varFiles: [w.holdVarFile] }), { fresh: true }),
  },
  {
    name: 'force-unlock-pg-held',
    what: 'force-unlock while a live apply holds the pg advisory lock (does terraform release it?)',
    files: { 'main.tf': holder, 'backend.tf': pgBackend },
    pg: true,
    run: (w) =>
      w.whileLocked('pg', async () => {
        await w.capture(forceUnlockArgs(SOME_LOCK_ID));
        const locks = await w.pg!.server.advisoryLocks(w.pg!.database);
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
  ...(
    [
      { name: 'state-push-identical', what: 'state push of the current state itself (success)', edit: (s) => s },
      {
        name: 'state-push-higher-serial',
        what: 'state push of the same lineage with a higher serial (success)',
        edit: (s) => ({ ...s, serial: s.serial + 5 }),
      },
      {
        name: 'state-push-lower-serial',
        what: 'state push of the same lineage with a lower serial',
        edit: (s) => ({ ...s, serial: s.serial - 1 }),
      },
      {
        name: 'state-push-same-serial-different',
        what: 'state push of the same lineage and serial with different content',
        edit: (s) => ({ ...s, outputs: { ...s.outputs, pushed: { value: 'different', type: 'string' } } }),
      },
      {
        name: 'state-push-other-lineage',
        what: 'state push of a state of another lineage (higher serial)',
        edit: (s) => ({ ...s, lineage: OTHER_LINEAGE, serial: s.serial + 1 }),
      },
      { name: 'state-push-not-json', what: 'state push of a file that is not a state', raw: 'this is not a state\n' },
    ] as { name: string; what: string; edit?: (s: StateFile) => StateFile; raw?: string }[]
  ).map(({ name, what, edit, raw }) => ({
    name,
    what,
    files: (w: Workdir) => ({ 'main.tf': versioned, 'backend.tf': localBackend(w.statePath) }),
    run: async (w: Workdir) => {
      const current = await w.stateWithFixedLineage();
      const file = join(w.privateDir, 'push.tfstate');
      await writeFile(file, raw ?? `${JSON.stringify(edit!(current), null, 2)}\n`);
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
