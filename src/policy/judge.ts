// One plan judged by the policy: the classifier streams every change and action into the
// evaluator, then the classification gains `policy` and `gated` counts its findings (guard/gate.ts,
// the one definition). Pure.
import type { Classification, PlannedAction } from '../schemas/classification.ts';
import { needsApproval } from '../guard/gate.ts';
import type { CompiledPolicy } from './compile.ts';
import { PolicyEvaluator, type EvaluatorOptions } from './evaluate.ts';
import type { PolicyChangeView, PolicyTool } from './views.ts';

export interface PlanJudgement {
  /** The classifier's onChange. */
  onChange(change: PolicyChangeView): void;
  /** The classifier's onAction. */
  onAction(action: PlannedAction): void;
  /** The classification with the policy's findings; once, after the classifier is done. */
  judge(plan: Classification): Classification;
}

export interface JudgementOptions extends EvaluatorOptions {
  /** The tool that made the plan (`plan.tool`); `plan.version` is the plan's terraform_version. */
  tool: PolicyTool;
}

export function planJudgement(policy: CompiledPolicy, options: JudgementOptions): PlanJudgement {
  const evaluator = new PolicyEvaluator(policy, options);
  return {
    onChange: (change) => evaluator.change(change),
    onAction: (action) => evaluator.action(action),
    judge(plan) {
      const outcome = evaluator.plan({ counts: plan.counts, tool: options.tool, version: plan.terraformVersion ?? '' });
      const judged = { ...plan, policy: { effects: options.effects ?? 'all', ...outcome } };
      return { ...judged, gated: needsApproval(judged) };
    },
  };
}
