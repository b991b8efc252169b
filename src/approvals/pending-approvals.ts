import type { PendingApprovalsByRule } from '../metrics/metrics.js';
import type { StateStore } from '../store/state-store.js';
import { currentVersion } from './input-version.js';
import { isQuestion, undecidedCalls, type PendingStep } from './pending-step.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';

/** Open steps read per workspace for the gauge: enough for any real backlog, bounded for a runaway one. */
const STEPS_READ_PER_TEAM = 1_000;

/**
 * Undecided approval calls of open steps, by the policy rule that governs them now, with the
 * oldest one's request time. Questions (`ask_user`) wait for the requester, not for approvers, so
 * they are not counted. Pure.
 */
export function summarizePendingApprovals(steps: readonly PendingStep[]): PendingApprovalsByRule[] {
  const byRule = new Map<string, PendingApprovalsByRule>();
  for (const step of steps) {
    if (step.phase !== 'pending') continue;
    for (const call of undecidedCalls(step)) {
      if (isQuestion(call)) continue;
      const rule = ruleLabel(currentVersion(call)?.policy ?? call.policy);
      const entry = byRule.get(rule) ?? { rule, pending: 0, oldestCreatedAt: step.createdAt };
      entry.pending += 1;
      entry.oldestCreatedAt = Math.min(entry.oldestCreatedAt, step.createdAt);
      byRule.set(rule, entry);
    }
  }
  return [...byRule.values()];
}

/** The rule's name, else its place in `policy.rules`; `default` when the tool's own setting decided. */
export function ruleLabel(policy: Pick<PolicyEvaluation, 'rule'> | undefined): string {
  const rule = policy?.rule;
  if (!rule) return 'default';
  return rule.name ?? `rules[${rule.index}]`;
}

/** Reads every workspace's open steps from the store, so every replica reports the same numbers. */
export async function readPendingApprovals(store: Pick<StateStore, 'teamsWithOpenSteps' | 'listOpenSteps'>): Promise<PendingApprovalsByRule[]> {
  const steps: PendingStep[] = [];
  for (const teamId of await store.teamsWithOpenSteps()) steps.push(...(await store.listOpenSteps({ teamId, limit: STEPS_READ_PER_TEAM })));
  return summarizePendingApprovals(steps);
}
