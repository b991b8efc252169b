import type { AuditEvent, AuditEventInput } from './audit-event.js';
import { redactChangeLine } from './redact-change-line.js';
import { redactSecrets } from './redact-secrets.js';

/**
 * The fields that carry tool arguments, which are where credentials turn up, and a question's answer:
 * a form the model designed, whose fields can ask for one as well.
 */
const INPUT_FIELDS = ['input', 'originalInput', 'editedInput', 'answer'] as const;

/**
 * What both audit logs store for an event: stamped with a time, and with secrets in the tool inputs
 * redacted. Redaction happens here, once, so the stream and the structured log can never disagree.
 * An edit's change lines (`password: "old" → "new"`) quote inputs, so they are redacted too.
 */
export function prepareAuditEvent(input: AuditEventInput, now: () => number): AuditEvent {
  const event = { ...input, at: input.at ?? now() } as AuditEvent & Record<string, unknown>;
  for (const field of INPUT_FIELDS) {
    if (Object.hasOwn(event, field)) event[field] = redactSecrets(event[field]);
  }
  if (Object.hasOwn(event, 'changes')) event.changes = redactChangeLines(event.changes);
  if (Array.isArray(event.versions)) {
    event.versions = event.versions.map((version: Record<string, unknown>) => ({
      ...version,
      input: redactSecrets(version.input),
      ...(Object.hasOwn(version, 'changes') && { changes: redactChangeLines(version.changes) }),
    }));
  }
  return event;
}

function redactChangeLines(changes: unknown): unknown {
  // Lines are strings when this code wrote them; anything else is redacted as an input would be.
  return Array.isArray(changes) ? changes.map((line) => (typeof line === 'string' ? redactChangeLine(line) : redactSecrets(line))) : redactSecrets(changes);
}
