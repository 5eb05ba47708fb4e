// Evaluates a compiled policy over one plan, one piece at a time, as the classifier streams it:
// every change, every action, then the plan once. Pure and bounded: the state is two bounded
// lists, their totals and counts; every evaluation is metered in cost units (cost.ts), against
// the rule's budget and the plan's. It fails closed: a deny rule whose match fails or runs over
// its budget denies, a requireApproval rule requires approval, a message that fails still denies
// (with the runner's words), and running out of the plan's budget or of the time limit does both
// for every rule. Each rule's evaluation is one step (`steps()`): a caller may yield between them.
// The clock is read once a rule (after it) and once as an entry's rules start: each step yields that
// reading, and a caller that paused between two steps says so as it resumes (the time away is not spent).
import { isDestructive } from '../plan/actions.ts';
import { DEFAULT_LIST_LIMIT } from '../plan/classify.ts';
import {
  actionBinding,
  celTypeName,
  changeBinding,
  isError,
  planBinding,
  type CelBindings,
  type CelProgram,
} from './cel.ts';
import type { CompiledPolicy, CompiledRule } from './compile.ts';
import { CostMeter, PLAN_COST_LIMIT, RULE_COST_LIMIT, type Exhaustion } from './cost.ts';
import type { RuleScope } from './schema.ts';
import type {
  PolicyActionView,
  PolicyApprovalRequired,
  PolicyChangeView,
  PolicyDenial,
  PolicyOutcome,
  PolicyPlanView,
} from '../plan/policy-views.ts';

/**
 * The time one plan's evaluation may take (CEL time only, summed over the calls: the I/O of the
 * stream in between does not count). A rule like the contract's examples costs about 3 µs of CPU per change on the
 * development machine, 5 µs cold (BENCHMARKS.md): 30 seconds is 10,000 changes under 1,000 such rules, twice the most
 * a policy holds (compile.ts, MAX_RULES), so only a pathological rule or plan reaches it.
 */
export const DEFAULT_TIME_LIMIT_MS = 30_000;
/** The rule name of a maxDeletes denial (a rule's name cannot contain a dot). */
export const MAX_DELETES_RULE = 'limits.maxDeletes';
/** The finding of an evaluation that ran out of the plan's cost budget, or of its time limit: a bound of the plan's evaluation, no rule's verdict. */
export const PLAN_COST_RULE = 'limits.planCost';
export const PLAN_TIME_RULE = 'limits.planTime';

export interface EvaluatorOptions {
  /** `deny`: deny rules and limits only (`apply --plan-artifact`: the approval was given for the plan). Default `all`. */
  effects?: 'all' | 'deny';
  /** The most `denied` and `approvalRequired` entries to list; their totals count all. Default 100, like the classification's lists. */
  listLimit?: number;
  timeLimitMs?: number;
  /** Cost units one rule's evaluation may spend (default RULE_COST_LIMIT), and the whole plan's (default PLAN_COST_LIMIT). */
  ruleCostLimit?: number;
  planCostLimit?: number;
  /** Milliseconds from any origin (tests pass a fake clock). Default performance.now. */
  now?: () => number;
  /** Told every approvalRequired entry, also those beyond the list limit (what an approval covered: ops/approval-coverage.ts). */
  onApprovalRequired?: (entry: PolicyApprovalRequired) => void;
}

/** Where the plan's budget or time ran out: the rule being evaluated, its entry, how many entries of its scope came before. */
interface RanOut {
  why: Exhaustion;
  rule: CompiledRule | undefined;
  address: string | undefined;
  before: number;
}

/**
 * One rule's evaluation of an entry: yields the clock's reading after it (a caller's slice reads it, no clock of
 * its own); resumed with `true` when the caller paused since (the event loop ran: that time is not the policy's).
 */
export type RuleSteps = Generator<number, void, boolean | undefined>;

/** What one evaluation of an expression gave: its value, or why it stopped before its end. */
type Evaluated = { value: ReturnType<CelProgram>; exhausted?: undefined } | { exhausted: Exhaustion };

export class PolicyEvaluator {
  readonly #policy: CompiledPolicy;
  readonly #rules: Readonly<Record<RuleScope, readonly CompiledRule[]>>;
  readonly #listLimit: number;
  readonly #timeLimitMs: number;
  readonly #ruleCostLimit: number;
  readonly #planCostLimit: number;
  readonly #now: () => number;
  readonly #onApprovalRequired: ((entry: PolicyApprovalRequired) => void) | undefined;
  readonly #denied: PolicyDenial[] = [];
  #deniedTotal = 0;
  readonly #approvalRequired: PolicyApprovalRequired[] = [];
  #approvalRequiredTotal = 0;
  #deletes = 0;
  #spentMs = 0;
  /** The clock's last reading in the entry being evaluated: where the next evaluation's time starts. */
  #lap = 0;
  #spentUnits = 0;
  #timedOut = false;
  #costExceeded = false;
  #finished = false;
  /** The plan's entries handed over, evaluated or not (the plan's size, once it is read). */
  readonly #seen = { change: 0, action: 0 };
  #ranOut: RanOut | undefined;
  #evaluations = 0;

  constructor(policy: CompiledPolicy, options: EvaluatorOptions = {}) {
    this.#policy = policy;
    const effective = options.effects === 'deny' ? policy.rules.filter((rule) => rule.effect === 'deny') : policy.rules;
    this.#rules = {
      change: effective.filter((r) => r.on === 'change'),
      action: effective.filter((r) => r.on === 'action'),
      plan: effective.filter((r) => r.on === 'plan'),
    };
    this.#listLimit = options.listLimit ?? DEFAULT_LIST_LIMIT;
    this.#timeLimitMs = options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
    this.#ruleCostLimit = options.ruleCostLimit ?? RULE_COST_LIMIT;
    this.#planCostLimit = options.planCostLimit ?? PLAN_COST_LIMIT;
    this.#now = options.now ?? (() => performance.now());
    this.#onApprovalRequired = options.onApprovalRequired;
  }

  /** One resource change (every entry the classification counts, destructive or not). */
  change(view: PolicyChangeView): void {
    for (const _ of this.changeSteps(view));
  }

  /** One provider action. */
  action(view: PolicyActionView): void {
    for (const _ of this.actionSteps(view));
  }

  /**
   * change(), one rule at a time: each step is one rule's evaluation, bounded by its budget. The change is counted as
   * this is called; its rules' generator is returned as it is (no generator around it: a step a rule costs one resume).
   */
  changeSteps(view: PolicyChangeView): RuleSteps {
    this.#assertOpen();
    // Delete, replace and unknown count; so does a kind this runner does not know (it is unknown).
    if (isDestructive(view.kind)) this.#deletes += 1;
    this.#seen.change += 1;
    return this.#evaluate('change', () => changeBinding(view), view.address);
  }

  /** action(), one rule at a time; the action counted as this is called. */
  actionSteps(view: PolicyActionView): RuleSteps {
    this.#assertOpen();
    this.#seen.action += 1;
    return this.#evaluate('action', () => actionBinding(view), view.address);
  }

  /** The plan, last: plan rules and limits, then the outcome. The evaluator takes nothing after it. */
  plan(view: PolicyPlanView): PolicyOutcome {
    for (const _ of this.planSteps(view));
    return this.outcome();
  }

  /** plan(), one rule at a time; then outcome(). */
  *planSteps(view: PolicyPlanView): RuleSteps {
    this.#assertOpen();
    yield* this.#evaluate('plan', () => planBinding(view), undefined);
    this.#finished = true;
    if (this.#ranOut) this.#reportRanOut(this.#ranOut);
    const maxDeletes = this.#policy.maxDeletes;
    if (maxDeletes && this.#deletes > maxDeletes.limit) {
      this.#deny({
        rule: MAX_DELETES_RULE,
        message: `the plan deletes ${this.#deletes} objects (deletes, replaces, deposed deletes and unknown actions) and the policy (${maxDeletes.file}) allows at most ${maxDeletes.limit} in one run: apply the change in smaller steps, or raise limits.maxDeletes`,
      });
    }
  }

  /** The rule evaluations begun so far (one a rule and entry), the one that ran out of a budget or the time included. */
  get evaluations(): number {
    return this.#evaluations;
  }

  /** What the evaluation found, limits included; after planSteps(). */
  outcome(): PolicyOutcome {
    if (!this.#finished) throw new Error('the policy outcome was asked before the plan was evaluated');
    return {
      denied: [...this.#denied],
      deniedTotal: this.#deniedTotal,
      approvalRequired: [...this.#approvalRequired],
      approvalRequiredTotal: this.#approvalRequiredTotal,
      deletes: this.#deletes,
      timedOut: this.#timedOut,
      cost: this.#spentUnits,
      costExceeded: this.#costExceeded,
    };
  }

  #assertOpen(): void {
    if (this.#finished)
      throw new Error('the policy evaluator was given more after plan(): one evaluator evaluates one plan');
  }

  /**
   * Each rule of the scope over one piece, one step each, over the same bindings (built once: CEL values, which no
   * evaluation changes); the time limit is checked before each rule. The time before the piece (the stream's I/O)
   * and while the caller paused is not spent: the clock is read as the rules start and after a pause.
   */
  *#evaluate(scope: RuleScope, bindings: () => CelBindings, address: string | undefined): RuleSteps {
    const rules = this.#rules[scope];
    if (this.#timedOut || this.#costExceeded || rules.length === 0) return;
    const variables = bindings();
    this.#lap = this.#now();
    for (const rule of rules) {
      if (this.#spentMs > this.#timeLimitMs) {
        this.#exhaust({ kind: 'time', limitMs: this.#timeLimitMs }, rule, scope, address);
        return;
      }
      this.#apply(rule, variables, address, scope);
      if (this.#timedOut || this.#costExceeded) return;
      if (yield this.#lap) this.#lap = this.#now();
    }
  }

  /**
   * One expression, metered: against the rule's budget, or what is left of the plan's when less; the time from the
   * last reading to the one after it is spent (one reading an expression: it starts where the one before ended).
   */
  #run(program: CelProgram, variables: CelBindings): Evaluated {
    const left = this.#planCostLimit - this.#spentUnits;
    const started = this.#lap;
    const meter = new CostMeter(Math.min(this.#ruleCostLimit, left), left < this.#ruleCostLimit ? 'plan' : 'rule', {
      at: started + (this.#timeLimitMs - this.#spentMs),
      limitMs: this.#timeLimitMs,
      now: this.#now,
    });
    const value = program(variables, meter);
    this.#lap = this.#now();
    this.#spentMs += this.#lap - started;
    this.#spentUnits += Math.min(meter.spent, meter.limit);
    return meter.exhausted ? { exhausted: meter.exhausted } : { value };
  }

  #apply(rule: CompiledRule, variables: CelBindings, address: string | undefined, scope: RuleScope): void {
    this.#evaluations += 1;
    const matched = this.#run(rule.match, variables);
    if (matched.exhausted && (matched.exhausted.kind === 'plan' || matched.exhausted.kind === 'time')) {
      this.#exhaust(matched.exhausted, rule, scope, address);
      return;
    }
    const result = matched.exhausted ? undefined : matched.value;
    if (result === false) return;
    const failure = matched.exhausted
      ? overrun(rule, matched.exhausted)
      : result === true
        ? undefined
        : isError(result!)
          ? result.message
          : `match gave ${celTypeName(result!)}, not a bool`;
    const where = address === undefined ? {} : { address };
    if (rule.effect === 'requireApproval') {
      this.#requireApproval({ rule: rule.name, ...where, ...(failure !== undefined && { error: printable(failure) }) });
      return;
    }
    let message: string;
    if (failure !== undefined)
      message = `rule "${rule.name}" (${rule.file}) failed on this ${rule.on} (${failure}) and denies it: a deny rule that cannot be evaluated denies; fix the rule`;
    else if (rule.message) {
      const said = this.#run(rule.message, variables);
      if (!said.exhausted && typeof said.value === 'string') message = said.value;
      else
        message = `denied by policy rule "${rule.name}" (${rule.file}); its message expression failed: ${said.exhausted ? overrun(rule, said.exhausted) : isError(said.value) ? said.value.message : `it gave ${celTypeName(said.value)}, not a string`}`;
    } else message = `denied by policy rule "${rule.name}" (${rule.file})`;
    this.#deny({ rule: rule.name, ...where, message: printable(message) });
  }

  /** Out of the plan's budget or of time: nothing more is evaluated; the finding is made once the plan's size is known (planSteps). */
  #exhaust(why: Exhaustion, rule: CompiledRule | undefined, scope: RuleScope, address: string | undefined): void {
    if (why.kind === 'time') this.#timedOut = true;
    else this.#costExceeded = true;
    const before = scope === 'plan' ? 0 : this.#seen[scope] - 1;
    this.#ranOut = { why, rule, address, before };
  }

  /**
   * An evaluation that ran out is reported as what it is, once, not as rules that denied: the bound,
   * where it ran out (the rule, the entry), the units spent and the plan's size. It fails closed: a
   * denial when any deny rule (or a limit) is in effect, else an approval required; either way the
   * plan is gated.
   */
  #reportRanOut({ why, rule, address, before }: RanOut): void {
    const bound =
      why.kind === 'time'
        ? `its time limit (${this.#timeLimitMs} ms of evaluation)`
        : `the plan's cost budget (${this.#planCostLimit.toLocaleString('en-US')} units)`;
    const n = (count: number) => count.toLocaleString('en-US');
    const where = address === undefined ? 'the plan' : `${rule?.on ?? 'change'} ${n(before + 1)}`;
    const of = `of the plan's ${n(this.#seen.change)} resource changes and ${n(this.#seen.action)} provider actions, under ${n(this.#policy.rules.length)} rules`;
    const at = rule ? ` at rule "${rule.name}" (${rule.file}) over ${where} ${of}` : ` ${of}`;
    const entry =
      address === undefined ? '' : ` (${where}: ${address.length > 200 ? `${address.slice(0, 199)}…` : address})`;
    const what = `the policy evaluation ran out of ${bound}${at}, having spent ${n(this.#spentUnits)} units: what came after was not judged${entry}`;
    const fix =
      'judge less at once: fewer or cheaper rules, or the change in smaller plans (contract/sections/policy.md §5 says what rules cost)';
    const name = why.kind === 'time' ? PLAN_TIME_RULE : PLAN_COST_RULE;
    const all = [...this.#rules.change, ...this.#rules.action, ...this.#rules.plan];
    if (all.some((r) => r.effect === 'deny') || this.#policy.maxDeletes)
      this.#deny({
        rule: name,
        message: printable(`${what}; denied, as an evaluation that cannot finish denies: ${fix}`),
      });
    else this.#requireApproval({ rule: name, error: printable(what) });
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

/** Why a rule's own evaluation stopped: its budget, or a value over the bounds. */
function overrun(rule: CompiledRule, why: Exhaustion): string {
  if (why.kind === 'size') return `it stopped: ${why.what}`;
  return `it ran over its cost budget of ${why.kind === 'rule' || why.kind === 'plan' ? why.limit : 0} units on this ${rule.on}`;
}

/**
 * A message or error fit for a log line: control characters as spaces. Kept whole (a policy builds at most
 * MAX_BUILT_STRING_CHARS characters): it may quote a secret, and only the sinks cut it, once it is masked (masking/boundary.ts).
 */
const printable = (message: string): string => message.replace(/\p{Cc}/gu, ' ');
