import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { makeStep } from '../approvals/pending-step.test-support.js';
import { resumeToolMessage } from './decision-messages.js';
import { recordUnrecordedCalls } from './interrupted-calls.js';
import { resumedTurnUnfinished } from './unfinished-resume.js';

const step = makeStep(['apv-1'], { phase: 'resumed', decisions: { 'apv-1': { outcome: 'approved', userId: 'U0BOB', at: 1_700_000_000_000, version: 0, approvedBy: ['U0BOB'] } } });
const asked: ModelMessage = {
  role: 'assistant',
  content: [
    { type: 'tool-call', toolCallId: 'call_0', toolName: 'restart_service', input: {} },
    { type: 'tool-approval-request', approvalId: 'apv-1', toolCallId: 'call_0' },
  ],
};
const resumed: ModelMessage[] = [{ role: 'user', content: 'restart the api, then list the pods' }, asked, resumeToolMessage(step)];
/** What a recovery writes of the calls a stopped process started: the approved restart ran, get_pods was started. */
const started = new Map([
  ['call_0', { toolName: 'restart_service', input: {} as unknown }],
  ['call_9', { toolName: 'get_pods', input: { namespace: 'prod' } as unknown }],
]);
const recorded = recordUnrecordedCalls(resumed, started);

describe('resumedTurnUnfinished', () => {
  it('holds for a history that ends with the resume', () => {
    expect(resumedTurnUnfinished(step, resumed)).toBe(true);
  });

  it('holds once a recovery, interrupted too, recorded the calls the stopped process started', () => {
    expect(recorded.length).toBeGreaterThan(resumed.length);
    expect(resumedTurnUnfinished(step, recorded)).toBe(true);
  });

  it('does not hold once the turn answered', () => {
    expect(resumedTurnUnfinished(step, [...recorded, { role: 'assistant', content: [{ type: 'text', text: 'Restarted.' }] }])).toBe(false);
  });

  it("does not hold once the turn went on to another step's calls, even a question answered since", () => {
    const question: ModelMessage = { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_5', toolName: 'ask_user', input: { question: 'Which namespace?' } }] };
    const answered: ModelMessage = { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_5', toolName: 'ask_user', output: { type: 'json', value: { answer: 'prod' } } }] };
    expect(resumedTurnUnfinished(step, [...resumed, question])).toBe(false);
    expect(resumedTurnUnfinished(step, [...resumed, question, answered])).toBe(false);
  });

  it('does not hold for a history without the resume, or with a newer message after it', () => {
    expect(resumedTurnUnfinished(step, resumed.slice(0, -1))).toBe(false);
    expect(resumedTurnUnfinished(step, [...resumed, { role: 'user', content: 'thanks' }])).toBe(false);
  });
});
