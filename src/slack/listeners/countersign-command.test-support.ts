import pino from 'pino';
import { vi } from 'vitest';
import type { Grant } from '../../approvals/grant.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { StateStore } from '../../store/state-store.js';
import { APPROVAL_ACTION_IDS } from '../blocks/action-ids.js';
import type { OrganisationMembership } from '../organisation-membership.js';
import { registerCountersignCommand } from './countersign-command.js';

/**
 * Carol in #ops (C0OPS), typing `/countersign …` or clicking a Revoke of the list it gave her, with
 * the store answering as `store` says; each returns how the listener settled, as Bolt would see it.
 */
export function countersignHarness(store: Partial<StateStore>) {
  let command: ((args: Record<string, unknown>) => Promise<void>) | undefined;
  const actions = new Map<string, (args: Record<string, unknown>) => Promise<void>>();
  const app = {
    command: (_name: string, handler: typeof command) => void (command = handler),
    action: (matcher: { action_id: string }, handler: (args: Record<string, unknown>) => Promise<void>) => void actions.set(matcher.action_id, handler),
  };
  registerCountersignCommand(app as never, {
    store: store as StateStore,
    audit: { append: async () => {} } as unknown as AuditLog,
    logger: pino({ level: 'silent' }),
    resolveGroups: async () => new Map(),
    organisationMembership: { of: async () => 'member' } as unknown as OrganisationMembership,
  });
  const postEphemeral = vi.fn(async (_args: { text: string; blocks?: unknown[] }) => ({ ok: true }));
  const client = { chat: { postEphemeral, getPermalink: async () => ({ ok: false }) } };
  // As Bolt runs a listener: an error it throws goes to app.error (which only logs it).
  const settle = (run: Promise<void> | undefined) => run?.then(() => 'returned', (error: unknown) => `threw: ${String(error)}`);
  return {
    postEphemeral,
    type: (text: string) =>
      settle(command?.({ ack: async () => {}, command: { team_id: 'T0TEAM', channel_id: 'C0OPS', user_id: 'UCAROL', text, enterprise_id: '' }, client })),
    clickRevoke: (grantId: string) =>
      settle(
        actions.get(APPROVAL_ACTION_IDS.revokeGrant)?.({
          ack: async () => {},
          body: { type: 'block_actions', user: { id: 'UCAROL', team_id: 'T0TEAM' }, team: { id: 'T0TEAM' }, channel: { id: 'C0OPS' } },
          action: { type: 'button', action_id: APPROVAL_ACTION_IDS.revokeGrant, value: grantId },
          client,
        }),
      ),
  };
}

/** Bob's grant number `index` in #ops: the higher the index, the later it was given. */
export function grantInOps(index: number): Grant {
  return {
    grantId: `g${index}`,
    teamId: 'T0TEAM',
    channel: 'C0OPS',
    scope: 'channel',
    toolName: `tool_${index}`,
    identicalArgumentsOnly: false,
    evaluation: { needsApproval: true, approvers: [{ kind: 'channel' }], required: 1, allowSelfApproval: false } as never,
    grantedBy: 'UBOB',
    createdAt: 1_764_180_000_000 + index,
    expiresAt: 1_764_200_000_000,
  } as Grant;
}
