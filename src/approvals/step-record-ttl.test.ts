import { describe, expect, it } from 'vitest';
import { STEP_RECORD_GRACE_MS, stepRecordTtlMs } from './step-record-ttl.js';

const HOUR = 3_600_000;
const now = Date.UTC(2026, 10, 21, 12, 0);

describe('stepRecordTtlMs', () => {
  it('keeps a step that can wait longer than the history until its deadline and the grace', () => {
    expect(stepRecordTtlMs({ step: { expiresAt: now + 24 * HOUR }, historyTtlMs: 12 * HOUR, now })).toBe(24 * HOUR + STEP_RECORD_GRACE_MS);
    expect(stepRecordTtlMs({ step: { expiresAt: now + 14 * 24 * HOUR }, historyTtlMs: 168 * HOUR, now })).toBe(14 * 24 * HOUR + STEP_RECORD_GRACE_MS);
  });

  it('keeps the history TTL when it is the longer', () => {
    expect(stepRecordTtlMs({ step: { expiresAt: now + 24 * HOUR }, historyTtlMs: 168 * HOUR, now })).toBe(168 * HOUR);
  });

  it('keeps a step without a deadline for the history TTL', () => {
    expect(stepRecordTtlMs({ step: {}, historyTtlMs: 12 * HOUR, now })).toBe(12 * HOUR);
  });
});
