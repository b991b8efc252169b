import type { SlackEmulator } from '../slack-emulator.js';
import type { WorkspaceState } from '../state/workspace-state.js';
import type { BotReceiver } from './bot-receiver.js';
import type { PayloadUser, PayloadWorkspace } from './interaction-payloads.js';

/** What every delivery needs: the emulated workspace (to read and record) and the bot to send to. */
export interface DeliveryContext {
  emulator: SlackEmulator;
  receiver: BotReceiver;
}

export function payloadWorkspace({ state }: { state: WorkspaceState }): PayloadWorkspace {
  return { teamId: state.identity.teamId, teamDomain: state.profile.teamDomain, appId: state.identity.appId };
}

export function payloadUser({ state, userId }: { state: WorkspaceState; userId: string }): PayloadUser {
  return { id: userId, name: state.users.get(userId)?.name ?? userId.toLowerCase() };
}

export function payloadChannel({ state, channelId }: { state: WorkspaceState; channelId: string }): { id: string; name: string } {
  return { id: channelId, name: state.channels.get(channelId) ?? `channel-${channelId.toLowerCase()}` };
}
