// `local init` names the object (--name, else the module directory's name); every op takes that name
// as --object, which must be a Kubernetes name: a name that is none is refused at init, before
// anything is written, not at every reconcile after it.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { initObject } from '../../src/local/edit.ts';

const drift = { intervalSeconds: 600, action: 'Report', remediationFailedLimit: 3 } as const;

describe('local init: the object name', () => {
  it('a name that is no Kubernetes object name (upper case, "_", 300 characters) is refused, naming it, and nothing is written', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'captf-local-name-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    // The modules exist: a --module that does not is refused first (LocalModuleMissing).
    const modules = join(dir, 'modules');
    await mkdir(join(modules, 'My_Module'), { recursive: true });
    await mkdir(join(modules, 'ok'), { recursive: true });
    const home = join(dir, 'home');
    for (const [module, name] of [
      [join(modules, 'My_Module'), undefined],
      [join(modules, 'ok'), 'Prod'],
      [join(modules, 'ok'), 'x'.repeat(300)],
    ] as const) {
      await assert.rejects(
        initObject(home, { module, image: 'example/demo:1.0.0', kind: 'cluster', drift, ...(name && { name }) }),
        (error: { reason?: string; message: string }) =>
          error.reason === 'UsageInvalid' &&
          error.message.includes('is not a Kubernetes object name') &&
          error.message.includes('give the object another name (--name)'),
        `${module} ${name}`,
      );
    }
    assert.ok(!existsSync(home), 'nothing was written');
  });
});
