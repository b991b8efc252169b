import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { makeStep } from '../../approvals/pending-step.test-support.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { StateStore } from '../../store/state-store.js';
import type { OrganisationMembership } from '../organisation-membership.js';
import { registerCountersignCommand } from './countersign-command.js';

/** `/countersign pending` in a channel where `count` requests wait; what Carol is shown. */
async function pendingReply(count: number): Promise<{ text: string; blocks: string }> {
  const waiting = Array.from({ length: count }, (_, index) => makeStep(['a1'], { createdAt: 1_764_190_000_000 - index * 1000, cardTs: `1764190000.00${100 + index}` }));
  const store = {
    // As the stores do: newest first, at most `limit`.
    listPendingSteps: async ({ limit }: { limit: number }) => waiting.slice(0, limit),
    // Where copies in the channel are looked for: none here.
    listOpenSteps: async () => [],
  } as unknown as StateStore;
  let command: ((args: Record<string, unknown>) => Promise<void>) | undefined;
  const app = { command: (_name: string, handler: typeof command) => void (command = handler), action: () => {} };
  registerCountersignCommand(app as never, {
    store,
    audit: { append: async () => {} } as unknown as AuditLog,
    logger: pino({ level: 'silent' }),
    resolveGroups: async () => new Map(),
    organisationMembership: { of: async () => 'member' } as unknown as OrganisationMembership,
  });
  const postEphemeral = vi.fn(async (_args: { text: string; blocks?: unknown[] }) => ({ ok: true }));
  await command!({
    ack: async () => {},
    command: { team_id: 'T0TEAM', channel_id: 'C0OPS', user_id: 'UCAROL', text: 'pending', enterprise_id: '' },
    client: { chat: { postEphemeral, getPermalink: async () => ({ ok: false }) } },
  });
  const reply = postEphemeral.mock.calls[0]![0];
  return { text: reply.text, blocks: JSON.stringify(reply.blocks) };
}

describe('/countersign pending', () => {
  it('says there are more than it lists when more than 20 wait, rather than a count of 20', async () => {
    const reply = await pendingReply(25);
    expect(reply.text).toBe('More than 20 approval requests waiting');
    expect(reply.blocks).toContain('…and more');
    expect(reply.blocks.match(/requested by/g)).toHaveLength(20);
  });

  it('gives the count, and no "more", when all of them are listed', async () => {
    for (const count of [1, 20]) {
      const reply = await pendingReply(count);
      expect(reply.text).toBe(`${count} approval request(s) waiting`);
      expect(reply.blocks).not.toContain('more');
      expect(reply.blocks.match(/requested by/g)).toHaveLength(count);
    }
  });
});
