// What a module call passes to a child module's sensitive variables (pure). terraform redacts the
// value inside the child, but not where the caller uses it too: a root variable passed to
// `module "db" { password = var.db_password }` and built into a DSN at the root is printed in
// clear. The plan's configuration says which of the caller's variables each sensitive variable is
// fed from (`expressions.<name>.references`), through any depth of modules.

/** The caller's variables (by name) that one module call passes to a sensitive variable of its module, at any depth, and the literal strings it passes to one. */
export interface SensitiveModuleInputs {
  variables: string[];
  constants: string[];
}

const VARIABLE_REFERENCE = /^var\.([A-Za-z_][A-Za-z0-9_-]*)/;

const objectOr = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** Calls followed at most: a configuration deeper than this is not read further (terraform's own module trees are far shallower). */
const MAX_DEPTH = 64;

/**
 * `call` is one member of `configuration.…module_calls` as terraform's JSON has it. A variable of
 * its module is taken as sensitive when it is declared so, or when it feeds a sensitive variable
 * of a module it calls; every variable of the caller its expression references, and its constant
 * string leaves, are reported. An expression that combines a secret with other variables reports
 * them all: masking a value that is no secret is the safe error.
 */
export function sensitiveModuleInputs(call: unknown, depth = 0): SensitiveModuleInputs {
  const found: SensitiveModuleInputs = { variables: [], constants: [] };
  if (depth > MAX_DEPTH) return found;
  const { expressions, module } = objectOr(call);
  const { variables, module_calls: calls } = objectOr(module);
  const sensitive = new Set(
    Object.entries(objectOr(variables))
      .filter(([, declaration]) => objectOr(declaration).sensitive === true)
      .map(([name]) => name),
  );
  for (const child of Object.values(objectOr(calls))) {
    const inner = sensitiveModuleInputs(child, depth + 1);
    for (const name of inner.variables) sensitive.add(name);
    found.constants.push(...inner.constants);
  }
  for (const name of sensitive) {
    const expression = objectOr(objectOr(expressions)[name]);
    const references = Array.isArray(expression.references) ? expression.references : [];
    for (const reference of references) {
      const variable = typeof reference === 'string' ? VARIABLE_REFERENCE.exec(reference)?.[1] : undefined;
      if (variable && !found.variables.includes(variable)) found.variables.push(variable);
    }
    if (typeof expression.constant_value === 'string') found.constants.push(expression.constant_value);
  }
  return found;
}
