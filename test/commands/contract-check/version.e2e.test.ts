// Version detection and the supported ranges (pure), and terraformVersion against real binaries.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RunnerError } from '../../../src/errors.ts';
import { StopHandle } from '../../../src/terraform/stop.ts';
import {
  checkSupported,
  parseVersionOutput,
  terraformVersion,
  unverifiedWarning,
  type Flavor,
} from '../../../src/terraform/version.ts';
import { testTerraformEnv } from '../../support/tf-modules.ts';
import { FAKE_TOFU, terraformReporting } from './image-trees.support.ts';

describe('parseVersionOutput', () => {
  test('terraform', () => {
    const v = parseVersionOutput('/bin/terraform', 'Terraform v1.11.4\non linux_amd64\n');
    assert.deepEqual([v.version, v.flavor], ['1.11.4', 'terraform']);
  });

  test('OpenTofu: the first line tells it apart, whatever the binary is called', () => {
    const v = parseVersionOutput('/usr/local/bin/terraform', 'OpenTofu v1.8.3\non linux_amd64\n');
    assert.deepEqual([v.version, v.flavor], ['1.8.3', 'opentofu']);
  });

  test('a pre-release keeps its suffix', () => {
    assert.equal(parseVersionOutput('tofu', 'OpenTofu v1.9.0-beta1').version, '1.9.0-beta1');
  });

  test('output that is not terraform is ImageInvalid', () => {
    assert.throws(
      () => parseVersionOutput('/bin/true', ''),
      (e: unknown) => e instanceof RunnerError && e.reason === 'ImageInvalid',
    );
    assert.throws(() => parseVersionOutput('/bin/x', 'Terraform vlatest'), /not "Terraform vX.Y.Z"/);
    assert.throws(() => parseVersionOutput('/bin/x', '{"terraform_version":"1.11.4"}'), /not "Terraform vX.Y.Z"/);
  });

  test('an out-of-date notice after the first line changes nothing', () => {
    const v = parseVersionOutput(
      '/bin/terraform',
      'Terraform v1.11.4\non linux_amd64\n\nYour version of Terraform is out of date! The latest version\nis 1.14.0.\n',
    );
    assert.deepEqual([v.version, v.flavor], ['1.11.4', 'terraform']);
  });
});

describe('checkSupported', () => {
  const cases: Array<[Flavor, string, boolean]> = [
    ['terraform', '1.5.0', true],
    ['terraform', '1.11.4', true],
    ['terraform', '1.99.0', true],
    ['terraform', '1.4.7', false],
    ['terraform', '1.5.0-rc1', false],
    ['terraform', '2.0.0', false],
    ['terraform', '0.15.5', false],
    ['opentofu', '1.6.0', true],
    ['opentofu', '1.10.2', true],
    ['opentofu', '1.5.7', false],
    ['opentofu', '1.6.0-beta1', false],
    ['opentofu', '2.0.0-alpha1', true], // sorts before 2.0.0: still below the bound
  ];
  for (const [flavor, version, ok] of cases) {
    test(`${flavor} ${version}: ${ok ? 'supported' : 'refused'}`, () => {
      if (ok) checkSupported({ flavor, version });
      else
        assert.throws(
          () => checkSupported({ flavor, version }),
          (e: unknown) =>
            e instanceof RunnerError &&
            e.kind === 'image' &&
            e.reason === 'ImageInvalid' &&
            e.message.includes(version),
        );
    });
  }
});

describe('unverifiedWarning', () => {
  test('a verified version runs silently; any other supported one runs with a warning naming it', () => {
    assert.equal(unverifiedWarning({ flavor: 'terraform', version: '1.11.4' }), undefined);
    for (const [flavor, version, name] of [
      ['terraform', '1.14.0', 'Terraform 1.14.0'],
      ['terraform', '1.11.3', 'Terraform 1.11.3'],
      ['opentofu', '1.11.4', 'OpenTofu 1.11.4'],
    ] as const) {
      const warning = unverifiedWarning({ flavor, version });
      assert.ok(warning?.startsWith(`${name} is not verified with this runner (verified: Terraform 1.11.4)`), warning);
      assert.doesNotThrow(() => checkSupported({ flavor, version }), 'it still runs');
    }
  });
});

describe('terraformVersion', () => {
  test('the real terraform', async () => {
    const v = await terraformVersion('terraform', { env: testTerraformEnv(), stop: new StopHandle() });
    assert.equal(v.flavor, 'terraform');
    assert.match(v.version, /^1\.\d+\.\d+/);
    assert.match(v.path, /^\//);
  });

  test('the OpenTofu stand-in', async () => {
    const v = await terraformVersion(FAKE_TOFU, {
      env: testTerraformEnv({ FAKE_TOFU_VERSION: '1.7.1' }),
      stop: new StopHandle(),
    });
    assert.deepEqual([v.version, v.flavor], ['1.7.1', 'opentofu']);
  });

  test('the fake terraform at another version', async (t) => {
    const fake = await terraformReporting(t, '1.5.7');
    const v = await terraformVersion(fake.terraformPath, { env: testTerraformEnv(fake.env), stop: new StopHandle() });
    assert.deepEqual([v.version, v.flavor], ['1.5.7', 'terraform']);
  });

  for (const path of ['no-such-terraform', '/nonexistent/terraform', '/etc/hostname']) {
    test(`"${path}" is not runnable: ImageInvalid saying how to fix it`, async () => {
      await assert.rejects(
        terraformVersion(path, { env: testTerraformEnv(), stop: new StopHandle() }),
        (e: unknown) => {
          assert.ok(e instanceof RunnerError);
          assert.equal(e.reason, 'ImageInvalid');
          assert.match(e.message, /install terraform .* or pass --terraform PATH/);
          return true;
        },
      );
    });
  }
});
