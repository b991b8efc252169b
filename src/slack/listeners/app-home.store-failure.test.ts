import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { makeStep } from '../../approvals/pending-step.test-support.js';
import type { CallDecider } from '../../approvals/decide-call.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { StateStore } from '../../store/state-store.js';
import { encodeApprovalActionValue, HOME_ACTION_IDS } from '../blocks/action-ids.js';
import type { OrganisationMembership } from '../organisation-membership.js';
import { registerAppHome } from './app-home.js';

/**
 * Review (App Home): Bob approves from Home; the approval is recorded (the call will run), but
 * reading the rest of the Home tab fails (Redis blip on the grants index). What is Bob told?
 */
describe('App Home click when the Home content cannot be read', () => {
  it('still tells the clicker the outcome of a recorded approval', async () => {
    const step = makeStep(['a1']);
    const actions = new Map<string, (args: Record<string, unknown>) => Promise<void>>();
    const app = { event: () => {}, action: (matcher: { action_id: string }, handler: (args: Record<string, unknown>) => Promise<void>) => void actions.set(matcher.action_id, handler) };
    const decider = {
      record: vi.fn(async () => ({ recorded: true, step, completedStep: true, effect: { kind: 'decided', decision: { outcome: 'approved', userId: 'UBOB', at: 1 } } })),
      publish: async () => {},
    } as unknown as CallDecider;
    registerAppHome(app as never, {
      store: {
        getStep: async () => step,
        listOpenSteps: async () => [],
        listTeamGrants: async () => {
          throw new Error('Connection is closed.');
        },
      } as unknown as StateStore,
      audit: { read: async () => [], append: async () => {} } as unknown as AuditLog,
      decider,
      resolveGroups: async () => new Map(),
      channelsOf: async () => new Set([step.channel]),
      currentEvaluation: async () => ({ needsApproval: true, approvers: [], required: 1 }) as never,
      logger: pino({ level: 'silent' }),
      now: () => 1_764_190_000_000,
      organisationMembership: { of: async () => 'member' } as unknown as OrganisationMembership,
    });
    const publish = vi.fn(async (_args: { view: { blocks: unknown[] } }) => ({ ok: true }));
    await actions.get(HOME_ACTION_IDS.approve)!({
      ack: async () => {},
      body: { type: 'block_actions', user: { id: 'UBOB', team_id: step.teamId }, team: { id: step.teamId }, trigger_id: 't' },
      action: { type: 'button', action_id: HOME_ACTION_IDS.approve, value: encodeApprovalActionValue({ stepId: step.stepId, approvalId: 'a1', version: 0 }) },
      client: { views: { publish }, chat: { getPermalink: async () => ({ ok: false }) }, users: { info: async () => ({}) } },
    });
    expect(decider.record).toHaveBeenCalledTimes(1);
    // The approval counted, and a view holding only the notice is published in place of the Home that could not be read.
    expect(publish).toHaveBeenCalled();
    expect(JSON.stringify(publish.mock.calls[0]![0].view.blocks)).toContain('Approved');
  });
});
