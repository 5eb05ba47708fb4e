// What an error quotes of the API server's answer: an answer that is no Kubernetes Status (a proxy's
// page, which may echo the request) is cut to 500 characters, masked whole first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorFromResponse } from '../../src/kube/api-errors.ts';
import { Masker } from '../../src/masking/mask.ts';
import { SECRETS } from '../../src/kube/transport.ts';

test('an answer that is no Status is masked whole, then cut: no part of a secret across the cut is quoted', () => {
  const secret = 'Kq7vR2pLx9TzW4mN8bHc';
  const masker = new Masker();
  masker.add(secret, 'test');
  for (const at of [480, 490, 495, 499]) {
    const body = `${'x'.repeat(at)}${secret}${'y'.repeat(200)}`;
    const error = errorFromResponse(
      { verb: 'create', resource: SECRETS, namespace: 'team-a', name: 'r' },
      { status: 502, headers: {}, body: Buffer.from(body) },
      1,
      undefined,
      masker,
    );
    const quoted = String(error.detail?.apiMessage);
    assert.ok(quoted.length <= 500, `${quoted.length} characters`);
    for (let i = 0; i + 4 <= secret.length; i++)
      assert.ok(!quoted.includes(secret.slice(i, i + 4)), `a part of the secret at ${at}: ${quoted.slice(at - 10)}`);
    assert.ok(!error.message.includes(secret.slice(0, 4)), error.message);
  }
});
