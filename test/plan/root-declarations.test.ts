import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';

describe('plan: both readers report the root declarations', () => {
  it('streams configuration.root_module resources (managed) and module calls', async () => {
    const { classifyPlanStream } = await import('../../src/plan/stream.ts');
    const { classifyPlan } = await import('../../src/plan/classify.ts');
    const doc = {
      format_version: '1.2',
      configuration: {
        root_module: {
          resources: [
            { address: 'terraform_data.a', mode: 'managed' },
            { address: 'data.terraform_remote_state.s', mode: 'data' },
          ],
          module_calls: { net: { source: './net' } },
        },
      },
    };
    const streamed: string[] = [];
    await classifyPlanStream(Readable.from([Buffer.from(JSON.stringify(doc))]), {
      onRootDeclaration: (a) => streamed.push(a),
    });
    const referenced: string[] = [];
    classifyPlan(doc, { onRootDeclaration: (a) => referenced.push(a) });
    assert.deepEqual(streamed, ['terraform_data.a', 'module.net']);
    assert.deepEqual(referenced, streamed);
  });
});
