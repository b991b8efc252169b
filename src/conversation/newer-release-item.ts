import type { Logger } from 'pino';
import type { NewerSchemaError } from '../store/newer-schema-error.js';
import type { TurnScope } from './turn-scope.js';
import type { WorkItem } from './work-item.js';

/** What a message or Try again hears when a newer release holds the thread's state. */
export const NEWER_RELEASE_THREAD_TEXT =
  ":hourglass_flowing_sand: This thread is being handled by a newer version of countersign; this process can't continue it, so nothing was done. Try again in a minute.";

/**
 * A work item whose thread or open step a newer release stored (a rolling deploy runs both on one
 * Redis; a rollback leaves its data behind): this process cannot read them, so it changes nothing,
 * neither closing the card nor starting the thread afresh over the stored one. A thread's items are
 * taken in order by whichever process holds its lock, this one again as likely, so the item cannot
 * wait for a newer one: it ends here. A message or Try again is told to come back; a resume says
 * nothing, since its step stays decided and the recovery sweep of a release that reads it resumes it
 * (this release's sweep leaves it alone: `recoverStalledWork`).
 */
export async function leaveItemToNewerRelease(options: { scope: TurnScope; item: WorkItem; error: NewerSchemaError; logger: Logger }): Promise<void> {
  const { scope, item, error, logger } = options;
  logger.warn({ event: 'item-left-to-newer-release', kind: item.kind, stored: error.kind, id: error.id, schemaVersion: error.found }, 'a newer countersign release stored this thread or step; left it as it is');
  if (item.kind === 'resume') return;
  await scope.messenger.postNotice({ channel: item.channel, threadTs: item.threadTs, text: NEWER_RELEASE_THREAD_TEXT });
}
