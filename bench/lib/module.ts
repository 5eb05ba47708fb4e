// The benchmarks' module of `terraform_data` instances and the state terraform would have written for it
// (bench/apply.ts, breakdown.ts and reader.ts through bench/lib/sides.ts, bench/masking-policy.ts).
import { randomUUID } from 'node:crypto';

export interface ModuleSize {
  /** terraform_data resources. */
  resources: number;
  /** Instances of each (count). */
  instances: number;
}

/** "RxN", e.g. 100x100: R resources of N instances each, N ≤ 100. */
export function parseModuleSize(text: string): ModuleSize {
  const match = /^(\d+)x(\d+)$/.exec(text);
  if (!match) throw new Error(`"${text}" is not RxN (resources x instances, e.g. 100x100)`);
  const size = { resources: Number(match[1]), instances: Number(match[2]) };
  if (size.resources < 1 || size.instances < 1 || size.instances > 100)
    throw new Error(`"${text}": at least one resource, 1 to 100 instances each`);
  return size;
}

/** `resources` terraform_data resources of `instances` each; r0's inputs follow var.gen (the changes). */
export function moduleText({ resources, instances }: ModuleSize): string {
  let tf = 'variable "gen" {\n  type = string\n}\n\n';
  for (let r = 0; r < resources; r++) {
    const input = r === 0 ? '"${var.gen}-${count.index}"' : `"static-${r}-\${count.index}"`;
    tf += `resource "terraform_data" "r${r}" {\n  count = ${instances}\n  input = ${input}\n}\n\n`;
  }
  return `${tf}output "instances" {\n  value = length(terraform_data.r0)\n}\n`;
}

/**
 * The state terraform would have written after applying the module with var.gen = gen: creating
 * 10,000 terraform_data instances through terraform takes many minutes (it is not what is measured).
 */
export function stateText({ resources, instances }: ModuleSize, gen: string): string {
  const out = [];
  for (let r = 0; r < resources; r++) {
    const inst = [];
    for (let i = 0; i < instances; i++) {
      const value = r === 0 ? `${gen}-${i}` : `static-${r}-${i}`;
      inst.push({
        index_key: i,
        schema_version: 0,
        attributes: {
          id: randomUUID(),
          input: { value, type: 'string' },
          output: { value, type: 'string' },
          triggers_replace: null,
        },
        sensitive_attributes: [],
      });
    }
    out.push({
      mode: 'managed',
      type: 'terraform_data',
      name: `r${r}`,
      provider: 'provider["terraform.io/builtin/terraform"]',
      instances: inst,
    });
  }
  return JSON.stringify({
    version: 4,
    terraform_version: '1.11.4',
    serial: 1,
    lineage: randomUUID(),
    outputs: { instances: { value: instances, type: 'number' } },
    resources: out,
    check_results: null,
  });
}
