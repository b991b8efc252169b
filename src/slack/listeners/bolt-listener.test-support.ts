import type { App } from '@slack/bolt';
import { vi } from 'vitest';
import type { PendingStep } from '../../approvals/pending-step.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { StateStore } from '../../store/state-store.js';
import { encodeApprovalActionValue, encodeCallFormMetadata } from '../blocks/action-ids.js';

type Handler = (args: Record<string, unknown>) => Promise<unknown>;

/**
 * Bolt's App as far as a listener module uses it: the action and view handlers it registers,
 * found by action id or callback id so a test can call them as Bolt would.
 */
export function fakeBoltApp() {
  const actions: Array<{ constraints: { action_id: string | RegExp }; handler: Handler }> = [];
  const views = new Map<string, Handler>();
  const app = {
    action: (constraints: { action_id: string | RegExp }, handler: Handler) => void actions.push({ constraints, handler }),
    view: (callbackId: string, handler: Handler) => void views.set(callbackId, handler),
  };
  return {
    app: app as unknown as App,
    action(actionId: string): Handler {
      const found = actions.find(({ constraints }) => (typeof constraints.action_id === 'string' ? constraints.action_id === actionId : constraints.action_id.test(actionId)));
      if (!found) throw new Error(`no action listener for ${actionId}`);
      return found.handler;
    },
    view(callbackId: string): Handler {
      const found = views.get(callbackId);
      if (!found) throw new Error(`no view listener for ${callbackId}`);
      return found;
    },
  };
}

/** What Redis says when it is down (ECONNREFUSED from ioredis). */
export const redisDown = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });

/** A store whose every step read fails with `error`; nothing else is called before a read. */
export function failingStore(error: () => Error = redisDown): StateStore {
  return { getStep: async () => Promise.reject(error()) } as unknown as StateStore;
}

/** A store holding one step, read only. */
export function storeWith(step: PendingStep): StateStore {
  return { getStep: async (stepId: string) => (stepId === step.stepId ? structuredClone(step) : undefined) } as unknown as StateStore;
}

/** A messenger that keeps the private answers it is asked to post. */
export function recordingMessenger() {
  const ephemerals: Array<{ userId: string; text: string }> = [];
  const messenger = { postEphemeral: async ({ userId, text }: { userId: string; text: string }) => void ephemerals.push({ userId, text }) } as unknown as ThreadMessenger;
  return { messenger, ephemerals };
}

/** A click on a card button in `channel`'s thread, as Bolt hands it to a listener. */
export function cardClick(options: { actionId: string; reference: { stepId: string; approvalId: string; version?: number }; userId?: string; teamId?: string; channel?: string }) {
  const channel = options.channel ?? 'C0OPS';
  const teamId = options.teamId ?? 'T0TEAM';
  const views = { open: vi.fn(async () => ({ ok: true })) };
  return {
    args: {
      ack: vi.fn(async () => {}),
      body: {
        user: { id: options.userId ?? 'U0BOB', team_id: teamId },
        team: { id: teamId },
        channel: { id: channel },
        container: { channel_id: channel, message_ts: '1700000000.000200', thread_ts: '1700000000.000100' },
        trigger_id: 'trigger',
      },
      action: { action_id: options.actionId, value: encodeApprovalActionValue(options.reference) },
      client: { views },
    },
    views,
  };
}

/** A form submitted from a modal about one call, with the blocks it was built with. */
export function formSubmit(options: { reference: { stepId: string; approvalId: string; version?: number }; blocks: Array<{ type: string; block_id?: string }>; values?: Record<string, unknown> }) {
  const ack = vi.fn(async (_response?: unknown) => {});
  const view = { private_metadata: encodeCallFormMetadata({ ...options.reference, channel: 'C0OPS' }), blocks: options.blocks, state: { values: options.values ?? {} } };
  return { args: { ack, body: { user: { id: 'U0BOB', team_id: 'T0TEAM' }, team: { id: 'T0TEAM' }, view }, view }, ack };
}
