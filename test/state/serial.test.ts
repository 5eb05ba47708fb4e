import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { withSerial } from '../../src/state/serial.ts';
import { RunnerError } from '../../src/errors.ts';

describe('state: serial rewrite', () => {
  it('changes only the top-level serial, byte for byte', () => {
    const text =
      '{\n  "version": 4,\n  "serial": 7,\n  "lineage": "l",\n  "resources": [{"instances":[{"attributes":{"serial":3,"big":123456789012345678901234567890}}]}]\n}\n';
    assert.equal(withSerial(text, 12), text.replace('"serial": 7', '"serial": 12'));
    assert.throws(() => withSerial('{"version":4}', 1), RunnerError);
  });
});
