import { describe, expect, it } from 'vitest';
import { denialReason } from '../../agent/decision-messages.js';
import { describeOutcome } from './demo-outcomes.js';
import type { ToolOutcome } from './demo-prompt.js';

const outcome = (output: ToolOutcome['output'], toolName = 'restart_service'): ToolOutcome => ({ toolCallId: 'c1', toolName, input: {}, output });

describe('describeOutcome', () => {
  it('quotes the last line of a short output, and shows the output', () => {
    const text = describeOutcome(outcome({ type: 'json', value: { command: ['x'], exitCode: 0, stdout: 'would run: x\ndone\n', stderr: '' } }));
    expect(text).toBe('`restart_service` ran: `done`\n```\nwould run: x\ndone\n```');
  });

  it('shows a long listing without pretending its last row is the outcome, cut to a few lines', () => {
    const stdout = Array.from({ length: 20 }, (_, index) => `pod-${index}`).join('\n');
    const text = describeOutcome(outcome({ type: 'json', value: { exitCode: 0, stdout, stderr: '' } }, 'get_pods'));
    expect(text.split('\n')[0]).toBe('`get_pods` ran');
    expect(text).toContain('pod-11\n… (8 more lines)');
    expect(text).not.toContain('pod-12');
  });

  it('reports a command that could not run or timed out', () => {
    expect(describeOutcome(outcome({ type: 'json', value: { exitCode: null, stdout: '', stderr: '', error: 'command not found: kubectl' } }))).toBe(
      '`restart_service` could not run: command not found: kubectl',
    );
    expect(describeOutcome(outcome({ type: 'json', value: { exitCode: null, timedOut: true, stdout: 'partial', stderr: '' } }))).toContain('`restart_service` failed (timed out):');
  });

  it('says why a call did not run when a newer message superseded it', () => {
    const reason = denialReason({ outcome: 'superseded', userId: 'U0ALICE', at: 1 });
    expect(describeOutcome(outcome({ type: 'execution-denied', reason }))).toBe(
      '`restart_service` was not run: <@U0ALICE> sent a newer message before this call was decided. Do not retry it unless the user asks again.',
    );
  });

  it('reports errors and other results as they are', () => {
    expect(describeOutcome(outcome({ type: 'error-text', value: 'Not run: there is no approval on record for this call.' }))).toBe(
      '`restart_service` failed: Not run: there is no approval on record for this call.',
    );
    expect(describeOutcome(outcome({ type: 'text', value: 'ok' }))).toBe('`restart_service` returned:\n```\nok\n```');
    expect(describeOutcome(outcome({ type: 'json', value: { status: 'green' } }))).toBe('`restart_service` returned:\n```\n{\n  "status": "green"\n}\n```');
  });
});
