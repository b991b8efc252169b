import type { Logger } from 'pino';
import type { ExecutionRecord } from '../agent/tool-set.js';
import type { WorkQueueStore } from '../store/state-store.js';
import type { Lease } from './lease.js';
import { shortError } from './short-error.js';
import type { ThreadMessenger } from './thread-messenger.js';

/**
 * Redis lost the thread's state under a running item (`Lease.stateLost`): the item stopped, nothing
 * it did can be saved, and no other process knows of it, so unlike a fenced item it tells the thread
 * ("A turn that cannot save its state gets a short message in the thread"), with what its tools did:
 * a call that ran must not go unmentioned, whatever stopped the item (a failed turn, or a save
 * refused after the turn ran its calls well), or the thread, told to ask again, would have it run
 * twice. Posted only while the thread's token is still gone: once another process has taken the
 * thread (a new message after the loss), the thread is theirs and this process is fenced as any
 * other. `executions`: every call the item ran (`TurnScope.executions`), and those refused before
 * their start (`started: false`): never said to have run, as the thread would not ask for them again.
 */
export async function postStateLostNotice(options: {
  store: Pick<WorkQueueStore, 'fenceState'>;
  /** Not the item's fenced messenger: that refuses every post once the state is lost. */
  messenger: ThreadMessenger;
  lease: Lease;
  where: { channel: string; threadTs: string };
  executions: readonly ExecutionRecord[];
  logger: Logger;
}): Promise<void> {
  const { lease, logger, executions } = options;
  const state = await options.store.fenceState(lease.fence).catch(() => undefined);
  if (state !== 'missing') return;
  const lost = ":warning: I lost this thread's saved state (my Redis came back without its data), so I stopped here and could not record this turn.";
  const ran = executions.filter((execution) => execution.started !== false);
  const notRun = executions.filter((execution) => execution.started === false);
  const text =
    ran.length === 0
      ? [lost, 'Please send your request again if you still need it.'].join('\n')
      : [
          `${lost} These calls already ran in it, and nothing I keep remembers them now:`,
          ...ran.map(outcomeLine),
          'Check what they did before you send your request again: asked again, I would run them again.',
          ...(notRun.length === 0 ? [] : [`Not run (stopped before they started): ${notRun.map((execution) => `\`${execution.toolName}\``).join(', ')}.`]),
        ].join('\n');
  await options.messenger.postNotice({ ...options.where, text }).catch((error: unknown) => logger.warn({ event: 'state-lost-notice-failed', err: error }, 'could not tell the thread its state was lost'));
}

/**
 * One line per call that ran: its result or error, bounded, credential-shaped text removed
 * (`shortError`). A call that threw had started and may or may not have had its effect.
 */
function outcomeLine(execution: ExecutionRecord): string {
  if ('error' in execution) return `• \`${execution.toolName}\` started and failed, so it may or may not have done its work: ${shortError(execution.error)}`;
  return `• \`${execution.toolName}\` ran; it returned: ${shortError(JSON.stringify(execution.output) ?? 'nothing')}`;
}
