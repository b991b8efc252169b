import type { StepTransition } from './step-transition.js';

/**
 * The transition with its grant's times put on the store's clock (`now`: Redis's `TIME`), keeping
 * the length the approver chose, and its `grant-created` record saying the same end. The transition
 * was computed with the clock of the replica that took the click, which may run ahead or behind:
 * stamped by it, "for 1 h" on a replica ten minutes fast would last 70 minutes by the clock every
 * replica's call starts are judged by (`markExecuting`). Pure; a transition without a grant is returned as is.
 */
export function stampGrant(transition: StepTransition, now: number): StepTransition {
  const { grant } = transition;
  if (!grant) return transition;
  const stamped = { ...grant, createdAt: now, expiresAt: now + (grant.expiresAt - grant.createdAt) };
  const audit = transition.audit.map((event) => (event.type === 'grant-created' && event.grantId === grant.grantId ? { ...event, expiresAt: stamped.expiresAt } : event));
  return { ...transition, grant: stamped, audit };
}
