import type { AuditEvent, AuditEventInput } from './audit-event.js';
import { redactSecrets } from './redact-secrets.js';

/** The fields that carry tool arguments, which are where credentials turn up. */
const INPUT_FIELDS = ['input', 'originalInput', 'editedInput'] as const;

/**
 * What both audit logs store for an event: stamped with a time, and with secrets in the tool inputs
 * redacted. Redaction happens here, once, so the stream and the structured log can never disagree.
 */
export function prepareAuditEvent(input: AuditEventInput, now: () => number): AuditEvent {
  const event = { ...input, at: input.at ?? now() } as AuditEvent & Record<string, unknown>;
  for (const field of INPUT_FIELDS) {
    if (Object.hasOwn(event, field)) event[field] = redactSecrets(event[field]);
  }
  if (Array.isArray(event.versions)) {
    event.versions = event.versions.map((version: Record<string, unknown>) => ({ ...version, input: redactSecrets(version.input) }));
  }
  return event;
}
