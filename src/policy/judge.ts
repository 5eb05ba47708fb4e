// One plan judged by the policy: the classifier streams every change and action into the
// evaluator, then the classification gains `policy` and `gated` counts its findings (plan/gate.ts,
// the one definition). The classifier hands views over as it parses (synchronously); they are
// evaluated in `pace()`, between two chunks of the plan, one rule at a time, yielding to the event
// loop every few milliseconds: a signal or the deadline is heard mid-evaluation, and a stop ends
// it there. What is yielded when never changes what is found (the budgets are in cost units).
import type { Classification, PlannedAction } from '../schemas/classification.ts';
import { needsApproval } from '../plan/gate.ts';
import { RunnerError } from '../errors.ts';
import type { CompiledPolicy } from './compile.ts';
import { PolicyEvaluator, type EvaluatorOptions, type RuleSteps } from './evaluate.ts';
import type { PolicyChangeView, PolicyTool } from '../plan/policy-views.ts';
import type { PlanObserver } from '../plan/observer.ts';

/** The longest the evaluation holds the event loop: a stop request waits at most this (and one rule's evaluation). */
const SLICE_MS = 20;

/** An observer of the plan's reading (plan/observer.ts): the changes and actions it is told are evaluated as the plan streams. */
export interface PlanJudgement extends PlanObserver {
  /** Queues the change's evaluation. */
  onChange(change: PolicyChangeView): void;
  /** Queues the action's evaluation. */
  onAction(action: PlannedAction): void;
  /** Evaluates what the classifier handed over so far (between chunks of the stream); rejects when the run is asked to stop. */
  pace(): Promise<void>;
  /** The classification with the policy's findings; once, after the classifier is done. */
  judge(plan: Classification): Promise<Classification>;
  /** Why the evaluation ended early, once a stop request ended it: what the run says of the step (terraform's interrupted show says less). */
  readonly interruption: RunnerError | undefined;
}

export interface JudgementOptions extends EvaluatorOptions {
  /** The tool that made the plan (`plan.tool`); `plan.version` is the plan's terraform_version. */
  tool: PolicyTool;
  /** Whether the run was asked to stop (a signal, the deadline): the evaluation ends at its next rule. */
  stopRequested?: () => boolean;
  /** Called once, as the first rule evaluation starts (the log says when the policy's time begins). */
  onEvaluationStart?: () => void;
}

export function planJudgement(policy: CompiledPolicy, options: JudgementOptions): PlanJudgement {
  const evaluator = new PolicyEvaluator(policy, options);
  const queue: (() => RuleSteps)[] = [];
  // The slices read the clock the time limit reads (tests pass a fake one: a slice then ends when they say).
  const now = options.now ?? (() => performance.now());
  let sliceStart = now();
  let interruption: RunnerError | undefined;
  let started = false;

  /**
   * Runs the steps, yielding between rules once a slice is spent (read on the evaluator's reading after each rule,
   * the same clock); a stop request ends it. The evaluator is told when it resumes after a pause.
   */
  async function run(steps: RuleSteps): Promise<void> {
    let paused = false;
    for (;;) {
      if (options.stopRequested?.()) throw (interruption ??= stopped(evaluator.evaluations));
      if (!started) {
        started = true;
        options.onEvaluationStart?.();
      }
      const step = steps.next(paused);
      paused = false;
      if (step.done) return;
      if (step.value - sliceStart >= SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        paused = true;
        sliceStart = now();
      }
    }
  }

  async function pace(): Promise<void> {
    while (queue.length) await run(queue.shift()!());
  }

  return {
    get interruption() {
      return interruption;
    },
    onChange: (change) => void queue.push(() => evaluator.changeSteps(change)),
    onAction: (action) => void queue.push(() => evaluator.actionSteps(action)),
    pace,
    async judge(plan) {
      await pace();
      await run(evaluator.planSteps({ counts: plan.counts, tool: options.tool, version: plan.terraformVersion ?? '' }));
      const judged = { ...plan, policy: { effects: options.effects ?? 'all', ...evaluator.outcome() } };
      return { ...judged, gated: needsApproval(judged) };
    },
  };
}

/** The evaluation ended by a stop request: no verdict, so nothing is applied (the step turns it into the run's interruption). */
function stopped(evaluated: number): RunnerError {
  return new RunnerError({
    kind: 'interrupted',
    reason: 'Interrupted',
    step: 'policy',
    message: `the policy evaluation was stopped after ${evaluated} rule evaluations, before it judged the whole plan: no verdict, nothing applied`,
  });
}
