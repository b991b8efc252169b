import { nextSlackTs } from '../slack-ts-clock.js';
import { createEphemeralLog, type EphemeralLog } from './ephemeral-log.js';
import { createInteractionHandles, type InteractionHandles } from './interaction-handles.js';
import { createMessageLog, type MessageLog } from './message-log.js';
import { createViewStacks, type ViewStacks } from './view-stacks.js';

export interface SlackIdentity {
  botUserId: string;
  botId: string;
  teamId: string;
  appId: string;
}

/** What the workspace is called; `url` is where permalinks point (the sandbox page, when there is one). */
export interface WorkspaceProfile {
  teamName: string;
  teamDomain: string;
  botName: string;
  url: string;
}

export interface WorkspaceUser {
  id: string;
  name: string;
  realName: string;
}

/**
 * What the emulated Slack workspace remembers between calls: messages (so chat.update and
 * conversations.replies behave like Slack), ephemerals, open views, thread statuses, trigger ids,
 * response URLs, reactions, user groups, people and channel names. Every change is announced to `onChange`
 * listeners (the sandbox page's live updates).
 */
export interface WorkspaceState {
  identity: SlackIdentity;
  profile: WorkspaceProfile;
  messages: MessageLog;
  ephemerals: EphemeralLog;
  views: ViewStacks;
  handles: InteractionHandles;
  /** Assistant thread statuses by `${channel}:${threadTs}`. */
  statuses: ReadonlyMap<string, string>;
  setStatus(options: { channel: string; threadTs: string; status: string }): void;
  /** `${channel}:${timestamp}:${name}`. */
  reactions: Set<string>;
  usergroupUsers: Map<string, string[]>;
  /** People users.info describes by name; anyone else gets a name derived from the id. */
  users: Map<string, WorkspaceUser>;
  /** Channel names by id, for the `channel` of interaction payloads. */
  channels: Map<string, string>;
  /** Members of the channels that have a list (users.conversations); everyone is in any other channel. */
  channelMembers: Map<string, Set<string>>;
  nextTs(): string;
  nextId(prefix: string): string;
  onChange(listener: () => void): () => void;
  clear(): void;
}

export function createWorkspaceState(options: { identity: SlackIdentity; profile: WorkspaceProfile }): WorkspaceState {
  let idSequence = 0;
  const listeners = new Set<() => void>();
  const statuses = new Map<string, string>();
  const onChange = () => {
    for (const listener of [...listeners]) listener();
  };
  const nextId = (prefix: string) => {
    idSequence += 1;
    return `${prefix}${String(idSequence).padStart(9, '0')}`;
  };
  const state: WorkspaceState = {
    identity: options.identity,
    profile: options.profile,
    messages: createMessageLog({ onChange }),
    ephemerals: createEphemeralLog({ nextTs: nextSlackTs, onChange }),
    views: createViewStacks({ onChange }),
    handles: createInteractionHandles({ nextId }),
    statuses,
    setStatus({ channel, threadTs, status }) {
      // An empty status is how Slack's API clears one.
      if (status === '') statuses.delete(`${channel}:${threadTs}`);
      else statuses.set(`${channel}:${threadTs}`, status);
      onChange();
    },
    reactions: new Set(),
    usergroupUsers: new Map(),
    users: new Map(),
    channels: new Map(),
    channelMembers: new Map(),
    nextTs: nextSlackTs,
    nextId,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    clear() {
      // The ts clock is shared and never reset: ts stay unique across tests sharing one Redis.
      state.messages.clear();
      state.ephemerals.clear();
      state.views.clear();
      state.handles.clear();
      statuses.clear();
      state.reactions.clear();
      state.usergroupUsers.clear();
      state.channelMembers.clear();
      onChange();
    },
  };
  return state;
}
