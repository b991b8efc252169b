/** A message only `user` sees; Slack never lists these in history. */
export interface StoredEphemeral {
  /** The `message_ts` Slack answers with; interactions in the ephemeral name it. */
  id: string;
  channel: string;
  user: string;
  threadTs?: string;
  text: string;
  blocks?: unknown[];
  /** Epoch milliseconds. */
  at: number;
}

export type EphemeralContent = Pick<StoredEphemeral, 'text' | 'blocks'>;

export interface EphemeralLog {
  post(ephemeral: Omit<StoredEphemeral, 'id' | 'at'>): StoredEphemeral;
  find(id: string): StoredEphemeral | undefined;
  /** A `response_url` answer with `replace_original` rewrites the ephemeral it came from. */
  replace(options: { id: string; content: EphemeralContent }): boolean;
  remove(id: string): boolean;
  list(): StoredEphemeral[];
  clear(): void;
}

export function createEphemeralLog(options: { nextTs: () => string; onChange: () => void }): EphemeralLog {
  const ephemerals = new Map<string, StoredEphemeral>();
  return {
    post(ephemeral) {
      const stored: StoredEphemeral = { ...ephemeral, id: options.nextTs(), at: Date.now() };
      ephemerals.set(stored.id, stored);
      options.onChange();
      return stored;
    },
    find: (id) => ephemerals.get(id),
    replace({ id, content }) {
      const stored = ephemerals.get(id);
      if (!stored) return false;
      const { blocks: _previousBlocks, ...rest } = stored;
      ephemerals.set(id, { ...rest, text: content.text, ...(content.blocks === undefined ? {} : { blocks: content.blocks }) });
      options.onChange();
      return true;
    },
    remove(id) {
      const removed = ephemerals.delete(id);
      if (removed) options.onChange();
      return removed;
    },
    list: () => [...ephemerals.values()],
    clear() {
      ephemerals.clear();
      options.onChange();
    },
  };
}
