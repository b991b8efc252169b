import { approvalsOf } from '../../src/approvals/input-version.js';
import type { StateStore } from '../../src/store/state-store.js';

/** What both reference models know of a step, as far as it can be compared with the store. */
export interface ProjectedStep {
  stepId: string;
  question: boolean;
  state: string;
  outcome?: string;
  versions: readonly unknown[];
  approvals: ReadonlyArray<ReadonlySet<string>>;
  approvedVersion?: number;
}

/** What can be compared of a step: the model's view, and the same read off the store (`observed`). */
export function projection(step: ProjectedStep) {
  const current = step.versions.length - 1;
  return {
    phase: step.state,
    outcome: step.outcome,
    versions: step.question ? 0 : step.versions.length,
    approvedVersion: step.approvedVersion,
    approvedBy: step.approvedVersion === undefined ? [] : [...step.approvals[step.approvedVersion]!].sort(),
    countingNow: step.question || step.outcome ? [] : [...step.approvals[current]!].sort(),
  };
}

export async function observed(store: StateStore, step: ProjectedStep) {
  const stored = (await store.getStep(step.stepId))!;
  const call = stored.calls[0]!;
  const decision = stored.decisions[call.approvalId];
  const current = (call.versions?.length ?? 0) - 1;
  return {
    phase: stored.phase,
    outcome: decision?.outcome,
    versions: call.versions?.length ?? 0,
    approvedVersion: decision?.version,
    approvedBy: [...(decision?.approvedBy ?? [])].sort(),
    countingNow: decision || current < 0 ? [] : approvalsOf(stored, call, current).map((approval) => approval.userId).sort(),
  };
}
