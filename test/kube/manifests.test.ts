// The example manifests in runner/ are checked three ways: against the Kubernetes OpenAPI schemas
// (kubernetes-models: types, required fields, formats), for unknown fields (TypeScript's excess
// property check against kubernetes-types, since the schemas allow extra properties and a real
// API server with strict field validation does not), and by use: the example Role is the RBAC
// table of the fake API server while the runner's sinks and secret store do their work.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type * as TS from 'typescript';
import { parseAllDocuments } from 'yaml';
// One model per import: a group's index loads every model of the group (core v1 alone: about 1 s of CPU).
import { Job } from 'kubernetes-models/batch/v1/Job';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { durationMs, envName, Settings } from '../../src/schemas/config.ts';
import { RunnerError } from '../../src/errors.ts';
import { REASONS } from '../../src/vocabulary/reasons.ts';
import { annotateJob, readBlockedResults, writeResultSecret } from '../../src/kube/sinks.ts';
import { SecretChunkStore } from '../../src/store/secret-store.ts';
import type { RbacRule } from '../support/fake-apiserver.ts';
import { blockedResult, startFakeCluster } from './fake-cluster.support.ts';

const repo = join(dirname(fileURLToPath(import.meta.url)), '../..');
// typescript is one 9 MB CommonJS file: require() loads it without the scan an import makes of it for
// named exports (about 0.9 s of CPU).
const ts = createRequire(import.meta.url)('typescript') as typeof TS;

async function loadYaml(file: string): Promise<any[]> {
  const docs = parseAllDocuments(await readFile(join(repo, file), 'utf8'));
  for (const doc of docs) assert.deepEqual(doc.errors, [], `${file} parses`);
  return docs.map((doc) => doc.toJS());
}

/** The declaration files every check reads (the library, kubernetes-types), parsed once for all of them. */
const parsedDeclarations = new Map<string, TS.SourceFile>();

/** TypeScript diagnostics for `const x: Type = <object>` per entry: unknown fields and wrong types. */
function typeCheck(entries: { type: string; from: string; object: unknown }[]): string[] {
  const fileName = join(repo, 'test/kube/__manifest_typecheck.ts');
  const source =
    entries.map(({ type, from }, i) => `import type { ${type} as T${i} } from '${from}';`).join('\n') +
    '\n' +
    entries.map(({ object }, i) => `export const object${i}: T${i} = ${JSON.stringify(object, null, 2)};`).join('\n');
  const options: TS.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    types: [],
    // The target's library without the DOM's (the default): the objects need nothing else, and the DOM is most of the parsing.
    lib: ['lib.es2022.d.ts'],
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile: read } = host;
  host.getSourceFile = (name, version, ...rest) => {
    if (name === fileName) return ts.createSourceFile(name, source, version);
    const parsed = parsedDeclarations.get(name) ?? getSourceFile.call(host, name, version, ...rest);
    if (parsed !== undefined) parsedDeclarations.set(name, parsed);
    return parsed;
  };
  host.fileExists = (name) => name === fileName || fileExists.call(host, name);
  host.readFile = (name) => (name === fileName ? source : read.call(host, name));
  const program = ts.createProgram([fileName], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

test('the example Job and Role validate against the Kubernetes schemas and have no unknown fields', async () => {
  const [job] = await loadYaml('runner/job.example.yaml');
  const [serviceAccount, role, roleBinding] = await loadYaml('runner/role.example.yaml');
  assert.deepEqual(
    [job, serviceAccount, role, roleBinding].map((doc) => doc.kind),
    ['Job', 'ServiceAccount', 'Role', 'RoleBinding'],
  );
  new Job(job).validate();
  new ServiceAccount(serviceAccount).validate();
  new Role(role).validate();
  new RoleBinding(roleBinding).validate();
  assert.deepEqual(
    typeCheck([
      { type: 'Job', from: 'kubernetes-types/batch/v1.js', object: job },
      { type: 'ServiceAccount', from: 'kubernetes-types/core/v1.js', object: serviceAccount },
      { type: 'Role', from: 'kubernetes-types/rbac/v1.js', object: role },
      { type: 'RoleBinding', from: 'kubernetes-types/rbac/v1.js', object: roleBinding },
    ]),
    [],
  );
});

test('the typo check does catch an unknown field', () => {
  const diagnostics = typeCheck([
    { type: 'Job', from: 'kubernetes-types/batch/v1.js', object: { spec: { backofLimit: 0, template: {} } } },
  ]);
  assert.equal(diagnostics.length, 1);
  assert.match(diagnostics[0], /backofLimit/);
});

/** Every exit code a reason ends with that a retry cannot pass: all but success, 1 (a retry may pass) and the stops (124, 130, 143). */
const FAIL_JOB_EXIT_CODES = [...new Set(Object.values(REASONS).map((row) => row.exitCode as number))]
  .filter((code) => ![0, 1, 124, 130, 143].includes(code))
  .sort((a, b) => a - b);

test('the example Job follows the runner contract', async () => {
  const [job] = await loadYaml('runner/job.example.yaml');
  const pod = job.spec.template.spec;
  const [container] = pod.containers;
  assert.equal(pod.containers.length, 1);
  assert.equal(container.name, 'source');
  assert.equal(pod.restartPolicy, 'Never');
  assert.equal(job.spec.podReplacementPolicy, 'Failed');
  assert.ok(job.spec.activeDeadlineSeconds > 0);
  assert.equal(container.terminationMessagePath, '/dev/termination-log');

  assert.deepEqual(job.spec.podFailurePolicy.rules, [
    { action: 'FailJob', onExitCodes: { containerName: 'source', operator: 'In', values: FAIL_JOB_EXIT_CODES } },
    { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
  ]);

  assert.equal(container.command, undefined, 'command would replace the image ENTRYPOINT: tini must stay PID 1');
  assert.match(container.image, /^[^@]+\/modules\/[^@]+@sha256:[0-9a-f]{64}$/, 'the module image, by digest');
  assert.equal(
    container.env.find((e: { name: string }) => e.name === 'CAPTF_IMAGE').value,
    container.image,
    'CAPTF_IMAGE names the image the Job runs, exactly',
  );
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.equal(container.securityContext.readOnlyRootFilesystem, true);
  assert.equal(container.securityContext.allowPrivilegeEscalation, false);
  assert.deepEqual(container.securityContext.capabilities.drop, ['ALL']);

  const mounts = Object.fromEntries(
    container.volumeMounts.map((m: { mountPath: string; name: string }) => [m.mountPath, m.name]),
  );
  const volumes = Object.fromEntries(pod.volumes.map((v: { name: string }) => [v.name, v]));
  assert.ok(volumes[mounts['/captf/inputs']].secret, 'inputs come from a Secret');
  assert.ok(volumes[mounts['/tmp']].emptyDir, '/tmp is writable');

  // Every CAPTF_* variable is a real setting, and the writable dirs it names are mounted.
  const env = Object.fromEntries(
    container.env.map((e: { name: string; value?: string; valueFrom?: unknown }) => [e.name, e.value ?? e.valueFrom]),
  );
  const settingVariables = new Set(Object.keys(Settings.shape).map(envName));
  for (const name of Object.keys(env).filter((n) => n.startsWith('CAPTF_')))
    assert.ok(settingVariables.has(name), `${name} is a setting`);
  assert.ok(volumes[mounts[env.CAPTF_WORKDIR]].emptyDir);
  assert.ok(volumes[mounts[env.CAPTF_OUT]].emptyDir);
  assert.deepEqual(env.CAPTF_JOB_NAME, { fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/job-name']" } });
  assert.deepEqual(env.CAPTF_JOB_UID, {
    fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/controller-uid']" },
  });
  // The graceful stop (stop grace, 5 s to SIGKILL) and writing the result fit before the kubelet's SIGKILL,
  // with the example's value and with the default.
  // The Job's deadline counts from before the pod is scheduled and its image pulled: the runner's comes 300 s earlier (contract.md, --deadline).
  assert.equal(durationMs(env.CAPTF_DEADLINE as string), (job.spec.activeDeadlineSeconds - 300) * 1000);
  for (const stopGrace of [env.CAPTF_STOP_GRACE as string, Settings.parse({}).stopGrace]) {
    assert.ok(
      durationMs(stopGrace) + 5_000 < pod.terminationGracePeriodSeconds * 1000 - 2_000,
      `stop grace ${stopGrace} leaves no time for the result`,
    );
  }
});

test('the example Role is all the runner needs, and no create rule pretends to be narrowed by name', async (t) => {
  const [job] = await loadYaml('runner/job.example.yaml');
  const [serviceAccount, role, roleBinding] = await loadYaml('runner/role.example.yaml');
  assert.equal(job.spec.template.spec.serviceAccountName, serviceAccount.metadata.name);
  assert.deepEqual(roleBinding.subjects, [
    { kind: 'ServiceAccount', name: serviceAccount.metadata.name, namespace: role.metadata.namespace },
  ]);
  assert.equal(roleBinding.roleRef.name, role.metadata.name);
  for (const rule of role.rules) if (rule.verbs.includes('create')) assert.equal(rule.resourceNames, undefined);

  const namespace = job.metadata.namespace;
  const h = await startFakeCluster(t, { serviceAccount: { namespace, name: serviceAccount.metadata.name } });
  h.fake.rbac = role.rules.map((rule: RbacRule) => ({ ...rule, namespaces: [namespace] }));
  const created = h.fake.addJob(namespace, job.metadata.name);
  const identity = { namespace, jobName: job.metadata.name, jobUid: created.metadata.uid };

  const written = await writeResultSecret(h.client, identity, blockedResult(), undefined);
  // An approved apply reads the blocked Job's result Secret: list by label, then get.
  const blocked = await readBlockedResults(h.client, namespace, {
    approvalHash: blockedResult().approvalHash!,
    objectKind: 'cluster',
    objectName: 'prod',
  });
  assert.equal(blocked.found.length, 1);
  await writeResultSecret(h.client, identity, blockedResult({ outcome: 'interrupted' }), undefined); // get + delete + create
  await annotateJob(h.client, identity, blockedResult(), written);
  const store = new SecretChunkStore({
    client: h.client,
    namespace,
    prefix: 'captf-backup-cluster-prod',
    artifactKind: 'backup',
  });
  const write = await store.create('b1');
  await write.putChunk(0, Buffer.from('state'));
  await write.held();
  await write.commit(Buffer.from('manifest'));
  await store.listObjects();
  await store.getChunk('b1', 0);
  await store.deleteObject('b1');
  assert.ok(h.fake.requests.every((r) => r.status !== 403));

  // The table is enforced: another Job of the namespace cannot be annotated.
  const other = h.fake.addJob(namespace, 'captf-apply-other-1');
  await assert.rejects(
    annotateJob(
      h.client,
      { namespace, jobName: 'captf-apply-other-1', jobUid: other.metadata.uid },
      blockedResult(),
      undefined,
    ),
    (error: unknown) => {
      assert.ok(error instanceof RunnerError);
      assert.equal(error.reason, 'KubeForbidden');
      return true;
    },
  );
});
