import type { SandboxChannel, SandboxSnapshot, SandboxUser, SandboxUsergroup } from '../sandbox-api.js';
import type { WorkspaceState } from '../emulator/state/workspace-state.js';

export interface SandboxDirectory {
  users: readonly SandboxUser[];
  channels: readonly SandboxChannel[];
  usergroups?: readonly SandboxUsergroup[];
  botName: string;
}

/** Everything the page shows, read from the emulated workspace: the page keeps no state of its own. */
export function sandboxSnapshot({ state, directory, demoModel }: { state: WorkspaceState; directory: SandboxDirectory; demoModel: boolean }): SandboxSnapshot {
  return {
    workspace: {
      teamId: state.identity.teamId,
      botUserId: state.identity.botUserId,
      botName: directory.botName,
      users: [...directory.users],
      channels: [...directory.channels],
      ...(directory.usergroups ? { usergroups: [...directory.usergroups] } : {}),
      demoModel,
    },
    messages: state.messages.all().map((message) => ({
      channel: message.channel,
      ts: message.ts,
      ...(message.thread_ts === undefined ? {} : { threadTs: message.thread_ts }),
      ...(message.user === undefined ? {} : { user: message.user }),
      ...(message.bot_id === undefined ? {} : { botId: message.bot_id }),
      text: message.text,
      ...(message.format === undefined ? {} : { format: message.format }),
      ...(message.blocks === undefined ? {} : { blocks: message.blocks }),
      ...(state.messages.isStreaming(message) ? { streaming: true } : {}),
      ...(message.edited === undefined ? {} : { edited: true }),
    })),
    ephemerals: state.ephemerals.list().map((ephemeral) => ({ ...ephemeral })),
    views: state.views
      .list()
      .filter((stored) => stored.user !== undefined && stored.view.type === 'modal')
      .map((stored) => ({
        viewId: stored.viewId,
        user: stored.user ?? '',
        view: stored.view,
        ...(stored.errors === undefined ? {} : { errors: stored.errors }),
        ...(stored.values === undefined ? {} : { values: stored.values }),
      })),
    statuses: Object.fromEntries(state.statuses),
  };
}
