import { describe, expect, it } from 'vitest';
import { denialReason } from '../agent/decision-messages.js';
import { cardNotPostedDecision } from './step-card.js';

describe('closing the calls of a card that could not be posted', () => {
  const decision = cardNotPostedDecision({ error: new Error('An API error occurred: invalid_blocks'), at: 1 });

  it('tells the model it was an error and nobody decided, not a human decision', () => {
    const text = denialReason(decision);
    expect(text).not.toContain('human decision');
    expect(text).not.toContain('Declined');
    expect(text).toContain('the approval card could not be posted (An API error occurred: invalid_blocks)');
    expect(text).toContain('This was an error, not a decision');
  });

  it('is recorded as countersign closing the call, never as a person', () => {
    expect(decision.userId).not.toMatch(/^[UW][A-Z0-9]+$/);
  });

  it('still calls a person’s denial a human decision', () => {
    expect(denialReason({ outcome: 'denied', userId: 'UBOB', at: 1, reason: 'not now' })).toContain('Declined by <@UBOB>: not now. This is a human decision');
  });
});
