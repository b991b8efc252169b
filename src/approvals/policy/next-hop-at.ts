/**
 * When a step's next escalation hop is due, as the step keeps it (`StepEscalation.nextAt`): `at`,
 * unless it falls at or after the step's expiry. Expiry stays the last step, so such a hop is never
 * made (`escalateTransition` refuses it) and the card must not promise it. The ladder's times come
 * from one call's rule and the expiry is the earliest of every call's (or an edit brought it
 * forward), so a hop can be due after the step expires though its rule's own ladder fits its expiry.
 * Every path that sets or shows a `nextAt` goes through here.
 */
export function nextHopAt({ at, expiresAt }: { at: number | undefined; expiresAt: number | undefined }): number | undefined {
  if (at === undefined || (expiresAt !== undefined && at >= expiresAt)) return undefined;
  return at;
}
