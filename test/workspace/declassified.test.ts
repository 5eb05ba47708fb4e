import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nonsensitiveNotice } from '../../src/workspace/declassified.ts';

describe('workspace: the notice of the calls of nonsensitive()', () => {
  it('none without a call', () => {
    assert.equal(nonsensitiveNotice('/captf/module', []), undefined);
  });

  it('names each call by its file relative to the module dir and its line', () => {
    const notice = nonsensitiveNotice('/captf/module', [
      { file: '/captf/module/main.tf', line: 3 },
      { file: '/captf/module/modules/db/out.tf.json', line: 12 },
    ])!;
    assert.equal(notice.code, 'NonsensitiveCalls');
    assert.match(
      notice.message,
      /^the module calls nonsensitive\(\) 2 times, at main\.tf:3, modules\/db\/out\.tf\.json:12: each declassifies a sensitive value: terraform prints what it returns in clear, .*; review each$/,
    );
  });

  it('lists at most 20 and counts the rest', () => {
    const calls = Array.from({ length: 23 }, (_, i) => ({ file: `m/f${i}.tf`, line: i + 1 }));
    const message = nonsensitiveNotice('m', calls)!.message;
    assert.match(
      message,
      /^the module calls nonsensitive\(\) 23 times, at f0\.tf:1, .*, f19\.tf:20 and 3 more \(contract check lists them all\): /,
    );
    assert.ok(!message.includes('f20.tf'));
  });
});
