// The dependency lock file as terraform writes it, read strictly.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LockFileSyntaxError, parseLockFile } from '../../../src/commands/contract-check/lock-file.ts';

/** What `terraform providers lock -platform=linux_amd64` writes against the registry (hashes shortened). */
const REGISTRY_LOCK = `# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "registry.terraform.io/hashicorp/null" {
  version     = "3.2.0"
  constraints = "3.2.0"
  hashes = [
    "h1:G0xIjL1jTLd5EHfC9oSHhr5wzWs8HFkZl2ml67F4Ph4=",
    "zh:0fbb5e5bd3e0ee1a32d2a1f4d89af2f1c2b3a0a5e8c7a8a0ed14d1e29b1f8e2a",
  ]
}

provider "registry.terraform.io/Hashicorp/Random" {
  version = "3.6.0" // a comment
  /* another */ hashes = ["h1:abc="]
}
`;

describe('parseLockFile', () => {
  test('each provider block: its address in lower case, its version and its hashes', () => {
    assert.deepEqual(parseLockFile(REGISTRY_LOCK), [
      {
        address: 'registry.terraform.io/hashicorp/null',
        version: '3.2.0',
        hashes: [
          'h1:G0xIjL1jTLd5EHfC9oSHhr5wzWs8HFkZl2ml67F4Ph4=',
          'zh:0fbb5e5bd3e0ee1a32d2a1f4d89af2f1c2b3a0a5e8c7a8a0ed14d1e29b1f8e2a',
        ],
      },
      { address: 'registry.terraform.io/hashicorp/random', version: '3.6.0', hashes: ['h1:abc='] },
    ]);
    assert.deepEqual(parseLockFile('# nothing locked\n'), []);
  });

  for (const [what, text, message] of [
    ['an escape in a string', 'provider "a/b/c" {\n  version = "1\\u0030"\n}\n', /line 2: unexpected "\\""/],
    [
      'a block without a version',
      'provider "a/b/c" {\n  hashes = []\n}\n',
      /line 1: the block of a\/b\/c has no version/,
    ],
    [
      'a second block for one provider',
      'provider "a/b/c" {\n  version = "1"\n}\nprovider "A/b/c" {\n  version = "2"\n}\n',
      /line 4: a second provider block for a\/b\/c/,
    ],
    [
      'a second version in a block',
      'provider "a/b/c" {\n  version = "1"\n  version = "2"\n}\n',
      /line 3: a second version/,
    ],
    ['another kind of block', 'module "x" {\n}\n', /line 1: expected "provider", found "module"/],
    [
      'a block that does not end',
      'provider "a/b/c" {\n  version = "1"\n',
      /expected a word, found the end of the file/,
    ],
    ['an expression', 'provider "a/b/c" {\n  version = var.v\n}\n', /line 2: unexpected "\."/],
  ] as const) {
    test(`refused: ${what}`, () => {
      assert.throws(
        () => parseLockFile(text),
        (error: unknown) => error instanceof LockFileSyntaxError && message.test(error.message),
      );
    });
  }
});
