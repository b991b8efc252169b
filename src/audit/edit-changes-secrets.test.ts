import { describe, expect, it } from 'vitest';
import { evaluation, makeStep, CHANNEL, CREATED_AT, TEAM } from '../approvals/pending-step.test-support.js';
import { applyCallAction, type CallActionResult } from '../approvals/transitions/call-action.js';
import { createMemoryAuditLog } from './memory-audit-log.js';

/**
 * An approver edits a credential-bearing field (here `password` / `headers.Authorization`). Besides
 * the inputs, the edit's change lines (`input-edited.changes`, `decision.versions[].changes`) quote
 * the old and new values, and they reach the Redis stream, the JSON log and `npm run audit` too.
 */
describe('secrets in the field-by-field changes of an edit', () => {
  it('keeps the old and new password out of the audit trail', async () => {
    const lines: unknown[] = [];
    const logger = { info: (object: unknown) => lines.push(object), warn: () => {}, error: () => {} };
    const audit = createMemoryAuditLog({ logger });
    const step = makeStep([{ approvalId: 'a1', input: { user: 'deploy', password: 'hunter2-model', headers: { Authorization: 'Bearer old-secret' } }, policy: evaluation({ required: 1 }) }]);
    const here = { teamId: TEAM, channel: CHANNEL, membership: 'member' as const };
    const editedInput = { user: 'deploy', password: 'S3cret-typed-by-bob', headers: { Authorization: 'Bearer new-secret' } };
    const edited = applyCallAction(
      step,
      { stepId: step.stepId, approvalId: 'a1', userId: 'U0BOB', origin: here, action: { kind: 'edit', fromVersion: 0, input: editedInput, submittedInput: editedInput, policy: evaluation({ required: 1 }) } },
      { now: CREATED_AT + 1_000, groupMembers: new Map(), newGrantId: () => 'g1' },
    ) as Extract<CallActionResult, { ok: true }>;
    expect(edited.ok).toBe(true);
    // One approver is needed: Bob's edit is his approval of the new version, so the same write decides the call.
    expect(edited.transition.audit.map((event) => event.type)).toEqual(['input-edited', 'decision']);
    for (const event of edited.transition.audit) await audit.append(event);

    const stored = JSON.stringify(await audit.read({ sinceMs: 0 }));
    const logged = JSON.stringify(lines);
    expect(stored).toContain('input-edited');
    for (const secret of ['hunter2-model', 'S3cret-typed-by-bob', 'old-secret', 'new-secret']) {
      expect(stored, `stream holds ${secret}`).not.toContain(secret);
      expect(logged, `log holds ${secret}`).not.toContain(secret);
    }
    // The trail still says which fields changed, as it does for any other edit.
    const events = await audit.read({ sinceMs: 0 });
    const editedEvent = events.find((event) => event.type === 'input-edited') as { changes: string[] };
    expect(editedEvent.changes).toEqual(['password: "[redacted]" → "[redacted]"', 'headers.Authorization: "[redacted]" → "[redacted]"']);
    const decision = events.find((event) => event.type === 'decision') as { versions: { changes?: string[] }[] };
    expect(decision.versions.at(-1)?.changes).toEqual(editedEvent.changes);
  });
});
