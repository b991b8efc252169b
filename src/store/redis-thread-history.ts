import type { ModelMessage } from 'ai';
import { createKnownHistories, digestOf, planHistoryWrite, type HistoryWrite } from './history-write-plan.js';
import { refuseNewerSchema } from './newer-schema-error.js';
import { THREAD_STATE_SCHEMA_VERSION, type ThreadState } from './thread-state.js';

/** A thread as `READ_THREAD_SCRIPT` returns it. */
export type ThreadReply = null | ['legacy', string] | ['list', string | null, string | null, string[]];

/** One planned write of a thread: its fields without the history, and the history write. */
export interface ThreadWrite {
  metaJson: string;
  historyJson: string;
}

/**
 * A thread's history is a Redis list of messages beside a hash of its other fields, so a save
 * appends the new messages (and trims the oldest) instead of writing the whole history again. This
 * keeps what the process last read or wrote of each recent thread; a write planned from stale
 * knowledge is refused by the script ('stale') and sent again as a rewrite.
 */
export function createThreadHistories() {
  const known = createKnownHistories();

  function plan(thread: ThreadState, rewrite: boolean): ThreadWrite & { digests: string[] } {
    const { messages, ...meta } = thread;
    const serialized = messages.map((message) => JSON.stringify(message));
    const digests = serialized.map(digestOf);
    const history: HistoryWrite = rewrite ? { mode: 'rewrite', append: serialized } : planHistoryWrite(known.get(thread.threadKey), serialized, digests);
    return { metaJson: JSON.stringify(meta), historyJson: JSON.stringify(history), digests };
  }

  return {
    /** Sends a thread write; `send` returns the script's reply (the new revision, 'stale', or another refusal). */
    async write(thread: ThreadState, send: (write: ThreadWrite) => Promise<unknown>, options: { rewrite?: boolean } = {}): Promise<unknown> {
      let planned = plan(thread, options.rewrite ?? false);
      let reply = await send(planned);
      if (reply === 'stale') {
        planned = plan(thread, true);
        reply = await send(planned);
      }
      if (typeof reply === 'number') known.set(thread.threadKey, { revision: reply, digests: planned.digests });
      else known.forget(thread.threadKey);
      return reply;
    },

    /**
     * The thread from a read reply; what was read becomes the base of the next write. What is stored
     * is untrusted and may not even be JSON (a tampered store, a bad manual fix): unreadable fields
     * read as no thread, and an unreadable message as one the loader's validation refuses, so the
     * history starts fresh instead of every message of the thread failing.
     */
    read(threadKey: string, reply: ThreadReply): ThreadState | undefined {
      if (!reply) return undefined;
      if (reply[0] === 'legacy') {
        known.forget(threadKey);
        const legacy = parsedOrUndefined(reply[1]) as ThreadState | undefined;
        return legacy === undefined ? undefined : current(threadKey, legacy);
      }
      const [, metaJson, revision, messages] = reply;
      const meta = metaJson === null ? undefined : (parsedOrUndefined(metaJson) as Omit<ThreadState, 'messages'> | undefined);
      if (meta === undefined) return undefined;
      known.set(threadKey, { revision: Number(revision ?? 0), digests: messages.map(digestOf) });
      return current(threadKey, { ...meta, messages: messages.map((message) => (parsedOrUndefined(message) as ModelMessage | undefined) ?? UNREADABLE_MESSAGE) });
    },
  };
}

/** Stands for a stored message that is not JSON: not a message, so the loader's validation refuses the history. */
const UNREADABLE_MESSAGE = { unreadable: 'stored message is not JSON' } as unknown as ModelMessage;

/** Undefined for text that is not JSON, or is JSON's null: neither is a thread nor a message. */
function parsedOrUndefined(json: string): unknown {
  try {
    return JSON.parse(json) ?? undefined;
  } catch {
    return undefined;
  }
}

/** A thread a newer release saved throws `NewerSchemaError`: read as none, it would be started afresh over the stored one. */
function current(threadKey: string, thread: ThreadState): ThreadState | undefined {
  refuseNewerSchema({ kind: 'thread', id: threadKey, schemaVersion: thread.schemaVersion, readable: THREAD_STATE_SCHEMA_VERSION });
  return thread.schemaVersion === THREAD_STATE_SCHEMA_VERSION ? thread : undefined;
}
