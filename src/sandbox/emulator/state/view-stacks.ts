export type SlackView = Record<string, unknown>;

/** A view as Slack keeps it: the full view object (ids, hash, state) and whose screen it is on. */
export interface StoredView {
  view: SlackView;
  hash: string;
  /** Unknown when the trigger id was not one the emulator issued (payloads built by tests). */
  user?: string;
  /** From the last submit's `response_action: errors`: block_id → message. */
  errors?: Record<string, string>;
  /** The `state.values` of the last submit, so a view shown again keeps what the person typed. */
  values?: Record<string, Record<string, unknown>>;
}

/**
 * Open views. A user's modals form a stack (views.push adds on top, closing the top shows the one
 * below); the map keeps insertion order, which is each stack's order, and views.update keeps a
 * view's place.
 */
export interface ViewStacks {
  find(viewId: string): StoredView | undefined;
  findByExternalId(externalId: string): string | undefined;
  /** views.open: a new modal replaces whatever the user had open. */
  open(options: { viewId: string; stored: StoredView }): void;
  /** views.push and `response_action: push`. */
  push(options: { viewId: string; stored: StoredView }): void;
  /** views.update and `response_action: update`: same id and place, new content and hash. */
  replace(options: { viewId: string; stored: StoredView }): void;
  setSubmission(options: { viewId: string; values: Record<string, Record<string, unknown>>; errors?: Record<string, string> }): void;
  close(viewId: string): void;
  closeAll(user: string): void;
  /** Every open view, the top of each user's stack last. */
  list(): Array<StoredView & { viewId: string }>;
  clear(): void;
}

export function createViewStacks(options: { onChange: () => void }): ViewStacks {
  const views = new Map<string, StoredView>();
  const stacks: ViewStacks = {
    find: (viewId) => views.get(viewId),
    findByExternalId(externalId) {
      for (const [viewId, stored] of views) if (stored.view.external_id === externalId) return viewId;
      return undefined;
    },
    open({ viewId, stored }) {
      if (stored.user !== undefined) removeWhere((candidate) => candidate.user === stored.user && candidate.view.type !== 'home');
      views.set(viewId, stored);
      options.onChange();
    },
    push({ viewId, stored }) {
      views.set(viewId, stored);
      options.onChange();
    },
    replace({ viewId, stored }) {
      views.set(viewId, stored);
      options.onChange();
    },
    setSubmission({ viewId, values, errors }) {
      const stored = views.get(viewId);
      if (!stored) return;
      const { errors: _previous, ...rest } = stored;
      views.set(viewId, { ...rest, values, ...(errors === undefined ? {} : { errors }) });
      options.onChange();
    },
    close(viewId) {
      if (views.delete(viewId)) options.onChange();
    },
    closeAll(user) {
      removeWhere((stored) => stored.user === user && stored.view.type !== 'home');
      options.onChange();
    },
    list: () => [...views].map(([viewId, stored]) => ({ ...stored, viewId })),
    clear() {
      views.clear();
      options.onChange();
    },
  };

  function removeWhere(predicate: (stored: StoredView) => boolean): void {
    for (const [viewId, stored] of views) if (predicate(stored)) views.delete(viewId);
  }
  return stacks;
}
