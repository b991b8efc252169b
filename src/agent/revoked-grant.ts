/**
 * What the model (and the audit trail) is told for a call the gate let through on a grant that was
 * revoked or expired before the call started (it waited for its marker, or for a command slot).
 * Nothing was started, so it says "not run"; the model can ask again, which shows a card.
 */
export function revokedGrantText(options: { grantId: string; toolName: string }): string {
  return `Not run: the grant ${options.grantId} for ${options.toolName} was revoked or has expired; ask for approval again.`;
}

/** Thrown where a grant-cleared call finds its grant gone before it starts: the call did not run. */
export class GrantNoLongerHoldsError extends Error {
  constructor(options: { grantId: string; toolName: string }) {
    super(revokedGrantText(options));
    this.name = 'GrantNoLongerHoldsError';
  }
}
