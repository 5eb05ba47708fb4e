// Evaluates a compiled policy over one plan, one piece at a time, as the classifier streams it:
// every change, every action, then the plan once. Pure and bounded: the state is two bounded
// lists, their totals and a count. It fails closed: a deny rule whose match fails denies, a
// requireApproval rule whose match fails requires approval, a message that fails still denies
// (with the runner's words), and running out of the time limit does both for every rule.
import { isDestructive } from '../plan/actions.ts';
import { DEFAULT_LIST_LIMIT } from '../plan/classify.ts';
import { actionBinding, celTypeName, changeBinding, isError, planBinding, type CelBindings } from './cel.ts';
import type { CompiledPolicy, CompiledRule } from './compile.ts';
import type { RuleScope } from './schema.ts';
import type { PolicyActionView, PolicyApprovalRequired, PolicyChangeView, PolicyDenial, PolicyOutcome, PolicyPlanView } from './views.ts';

/**
 * The time one plan's evaluation may take (CEL time only, summed over the calls: the I/O of the
 * stream in between does not count). A rule costs about 6 µs per change on a development machine:
 * 30 seconds is 10,000 changes under 500 rules, far beyond a real plan, so only a pathological rule or plan reaches it.
 */
export const DEFAULT_TIME_LIMIT_MS = 30_000;
/** The longest message a denial carries: it travels in the termination message and the summaries. */
export const MAX_MESSAGE_CHARS = 1000;
/** The rule name of a maxDeletes denial (a rule's name cannot contain a dot). */
export const MAX_DELETES_RULE = 'limits.maxDeletes';

export interface EvaluatorOptions {
  /** `deny`: deny rules and limits only (`apply --plan-artifact`: the approval was given for the plan). Default `all`. */
  effects?: 'all' | 'deny';
  /** The most `denied` and `approvalRequired` entries to list; their totals count all. Default 100, like the classification's lists. */
  listLimit?: number;
  timeLimitMs?: number;
  /** Milliseconds from any origin (tests pass a fake clock). Default performance.now. */
  now?: () => number;
  /** Told every approvalRequired entry, also those beyond the list limit (what an approval covered: ops/approval-coverage.ts). */
  onApprovalRequired?: (entry: PolicyApprovalRequired) => void;
}

const SCOPES = ['change', 'action', 'plan'] as const satisfies readonly RuleScope[];

export class PolicyEvaluator {
  readonly #policy: CompiledPolicy;
  readonly #rules: Readonly<Record<RuleScope, readonly CompiledRule[]>>;
  readonly #listLimit: number;
  readonly #timeLimitMs: number;
  readonly #now: () => number;
  readonly #onApprovalRequired: ((entry: PolicyApprovalRequired) => void) | undefined;
  readonly #denied: PolicyDenial[] = [];
  #deniedTotal = 0;
  readonly #approvalRequired: PolicyApprovalRequired[] = [];
  #approvalRequiredTotal = 0;
  #deletes = 0;
  #spentMs = 0;
  #timedOut = false;
  #finished = false;

  constructor(policy: CompiledPolicy, options: EvaluatorOptions = {}) {
    this.#policy = policy;
    const effective = options.effects === 'deny' ? policy.rules.filter((rule) => rule.effect === 'deny') : policy.rules;
    this.#rules = { change: effective.filter((r) => r.on === 'change'), action: effective.filter((r) => r.on === 'action'), plan: effective.filter((r) => r.on === 'plan') };
    this.#listLimit = options.listLimit ?? DEFAULT_LIST_LIMIT;
    this.#timeLimitMs = options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#onApprovalRequired = options.onApprovalRequired;
  }

  /** One resource change (every entry the classification counts, destructive or not). */
  change(view: PolicyChangeView): void {
    this.#assertOpen();
    // Delete, replace and unknown count; so does a kind this runner does not know (it is unknown).
    if (isDestructive(view.kind)) this.#deletes += 1;
    this.#evaluate('change', () => changeBinding(view), view.address);
  }

  /** One provider action. */
  action(view: PolicyActionView): void {
    this.#assertOpen();
    this.#evaluate('action', () => actionBinding(view), view.address);
  }

  /** The plan, last: plan rules and limits, then the outcome. The evaluator takes nothing after it. */
  plan(view: PolicyPlanView): PolicyOutcome {
    this.#assertOpen();
    this.#evaluate('plan', () => planBinding(view), undefined);
    this.#finished = true;
    const maxDeletes = this.#policy.maxDeletes;
    if (maxDeletes && this.#deletes > maxDeletes.limit) {
      this.#deny({
        rule: MAX_DELETES_RULE,
        message: `the plan deletes ${this.#deletes} objects (deletes, replaces, deposed deletes and unknown actions) and the policy (${maxDeletes.file}) allows at most ${maxDeletes.limit} in one run: apply the change in smaller steps, or raise limits.maxDeletes`,
      });
    }
    return {
      denied: [...this.#denied],
      deniedTotal: this.#deniedTotal,
      approvalRequired: [...this.#approvalRequired],
      approvalRequiredTotal: this.#approvalRequiredTotal,
      deletes: this.#deletes,
      timedOut: this.#timedOut,
    };
  }

  #assertOpen(): void {
    if (this.#finished) throw new Error('the policy evaluator was given more after plan(): one evaluator evaluates one plan');
  }

  /** Each rule of the scope over one piece; the time limit is checked before each rule. */
  #evaluate(scope: RuleScope, bindings: () => CelBindings, address: string | undefined): void {
    const rules = this.#rules[scope];
    if (this.#timedOut || rules.length === 0) return;
    const started = this.#now();
    const variables = bindings();
    for (const rule of rules) {
      if (this.#spentMs + (this.#now() - started) > this.#timeLimitMs) {
        this.#timeOut();
        break;
      }
      this.#apply(rule, variables, address);
    }
    this.#spentMs += this.#now() - started;
  }

  #apply(rule: CompiledRule, variables: CelBindings, address: string | undefined): void {
    const result = rule.match(variables);
    if (result === false) return;
    const failure = result === true ? undefined : isError(result) ? result.message : `match gave ${celTypeName(result)}, not a bool`;
    const where = address === undefined ? {} : { address };
    if (rule.effect === 'requireApproval') {
      this.#requireApproval({ rule: rule.name, ...where, ...(failure !== undefined && { error: printable(failure) }) });
      return;
    }
    let message: string;
    if (failure !== undefined) message = `rule "${rule.name}" (${rule.file}) failed on this ${rule.on} (${failure}) and denies it: a deny rule that cannot be evaluated denies; fix the rule`;
    else if (rule.message) {
      const said = rule.message(variables);
      if (typeof said === 'string') message = said;
      else message = `denied by policy rule "${rule.name}" (${rule.file}); its message expression failed: ${isError(said) ? said.message : `it gave ${celTypeName(said)}, not a string`}`;
    } else message = `denied by policy rule "${rule.name}" (${rule.file})`;
    this.#deny({ rule: rule.name, ...where, message: printable(message) });
  }

  /** Out of time: every rule (not yet evaluated over every entry) fails closed once, and nothing more is evaluated. */
  #timeOut(): void {
    this.#timedOut = true;
    const why = `the policy evaluation ran out of its time limit (${this.#timeLimitMs} ms) before the rule was evaluated over the whole plan`;
    for (const scope of SCOPES) {
      for (const rule of this.#rules[scope]) {
        if (rule.effect === 'deny') this.#deny({ rule: rule.name, message: `${why}: denied, as a deny rule that cannot be evaluated denies; simplify the rule or split the plan` });
        else this.#requireApproval({ rule: rule.name, error: why });
      }
    }
  }

  #deny(denial: PolicyDenial): void {
    this.#deniedTotal += 1;
    if (this.#denied.length < this.#listLimit) this.#denied.push(denial);
  }

  #requireApproval(entry: PolicyApprovalRequired): void {
    this.#approvalRequiredTotal += 1;
    this.#onApprovalRequired?.(entry);
    if (this.#approvalRequired.length < this.#listLimit) this.#approvalRequired.push(entry);
  }
}

/** A message or error fit for a log line and the termination message: control characters as spaces, bounded. */
function printable(message: string): string {
  const flat = message.replace(/\p{Cc}/gu, ' ');
  return flat.length <= MAX_MESSAGE_CHARS ? flat : `${flat.slice(0, MAX_MESSAGE_CHARS - 1)}…`;
}
