import type { SandboxChannel, SandboxUser, SandboxUsergroup } from './sandbox-api.js';
import type { SlackEmulator } from './emulator/slack-emulator.js';

/**
 * The people and the channel of the sandbox workspace. The example policy
 * (example/countersign.sandbox.yml) names these ids: alice asks, bob and carol are the on-call
 * approvers (also the user group S0ONCALL), dave is in the channel but may not approve.
 */
export const SANDBOX_TEAM_ID = 'T0SANDBOX';
export const SANDBOX_BOT = { userId: 'U0COUNTERSIGN', botId: 'B0COUNTERSIGN', appId: 'A0COUNTERSIGN', name: 'countersign' } as const;
export const SANDBOX_ONCALL_GROUP = 'S0ONCALL';

export const SANDBOX_USERS: readonly SandboxUser[] = [
  { id: 'U0ALICE', name: 'alice', role: 'requester' },
  { id: 'U0BOB', name: 'bob', role: 'on-call approver' },
  { id: 'U0CAROL', name: 'carol', role: 'on-call approver' },
  { id: 'U0DAVE', name: 'dave', role: 'outsider: may not approve' },
];

export const SANDBOX_USERGROUPS: readonly SandboxUsergroup[] = [{ id: SANDBOX_ONCALL_GROUP, handle: 'oncall' }];

export const SANDBOX_CHANNELS: readonly SandboxChannel[] = [
  { id: 'C0OPS', name: 'ops' },
  // Where the prod rule of the example config also sends its cards (`notify`).
  { id: 'C0APPROVALS', name: 'approvals' },
];

/** The emulator's identity options for the sandbox workspace. */
export const SANDBOX_IDENTITY = { botUserId: SANDBOX_BOT.userId, botId: SANDBOX_BOT.botId, teamId: SANDBOX_TEAM_ID, appId: SANDBOX_BOT.appId };

/** Tells the emulated workspace who is in it, so users.info, payloads and user groups name them. */
export function populateSandboxWorkspace({ emulator }: { emulator: SlackEmulator }): void {
  const { state } = emulator;
  for (const user of SANDBOX_USERS) state.users.set(user.id, { id: user.id, name: user.name, realName: capitalised(user.name) });
  state.users.set(SANDBOX_BOT.userId, { id: SANDBOX_BOT.userId, name: SANDBOX_BOT.name, realName: SANDBOX_BOT.name });
  for (const channel of SANDBOX_CHANNELS) state.channels.set(channel.id, channel.name);
  state.usergroupUsers.set(SANDBOX_ONCALL_GROUP, ['U0BOB', 'U0CAROL']);
}

function capitalised(name: string): string {
  return `${name.charAt(0).toUpperCase()}${name.slice(1)}`;
}
