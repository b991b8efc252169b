import type { AutomaticApproval } from '../agent/tool-set.js';
import type { ThreadState } from '../store/thread-state.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { TurnScope } from './turn-scope.js';
import { untrustedNoticeText } from './untrusted-notice-text.js';

/**
 * A problem's message carries what the source itself said (an MCP server's stderr or error body):
 * untrusted text, so no link, mention or ping of it may work, and it may not fill the thread.
 */
const MAX_PROBLEM_LENGTH = 600;

/** One-line notes in the thread beside the answer; failing to post one is logged, not fatal (unless fenced). */
export function createThreadNotes({ toolProblems, logger }: Pick<PhaseDependencies, 'toolProblems' | 'logger'>) {
  /**
   * A tool source that is down is said once per thread: its tools will fail until it reconnects. One
   * whose tools are withheld until its config changes says only why: retrying does not bring them.
   */
  async function noteToolProblems(scope: TurnScope, thread: ThreadState): Promise<void> {
    const problems = toolProblems?.() ?? [];
    const fresh = problems.filter((problem) => !thread.notedProblems?.includes(`${problem.source}: ${problem.message}`));
    if (fresh.length === 0) return;
    thread.notedProblems = [...(thread.notedProblems ?? []), ...fresh.map((problem) => `${problem.source}: ${problem.message}`)].slice(-20);
    await scope.messenger
      .postNotice({
        channel: thread.channel,
        threadTs: thread.threadTs,
        text: fresh
          .map((problem) => `:electric_plug: ${untrustedNoticeText(problem.message, { maxLength: MAX_PROBLEM_LENGTH })}${problem.needsConfigChange ? '' : ' Its tools will fail until it is back; I keep retrying.'}`)
          .join('\n'),
      })
      .catch((error: unknown) => {
        if (scope.lease.lost()) throw error;
        logger.warn({ event: 'tool-problem-note-failed', err: error }, 'could not post tool source problem');
      });
  }

  /** Auto-approved calls ran without a card (their audit records went with their markers); one line in the thread says so. */
  async function noteAutomaticApprovals(scope: TurnScope, thread: ThreadState, automatic: readonly AutomaticApproval[]): Promise<void> {
    if (automatic.length === 0) return;
    const lines = automatic.map(({ toolName, grant, schedule }) =>
      schedule !== undefined
        ? `:alarm_clock: \`${toolName}\` ran without a card: the schedule ${schedule} lists it in its autoApprove.`
        : grant
        ? `:ticket: \`${toolName}\` ran without a card: allowed by <@${grant.grantedBy}>'s grant for this ${grant.scope} until <!date^${Math.floor(grant.expiresAt / 1000)}^{date_short_pretty} at {time}|later> (\`/countersign grants\` to revoke).`
        : `:robot_face: \`${toolName}\` ran without a card: auto-approve mode is on here.`,
    );
    await scope.messenger.postNotice({ channel: thread.channel, threadTs: thread.threadTs, text: [...new Set(lines)].join('\n') }).catch((error: unknown) => {
      if (scope.lease.lost()) throw error;
      logger.warn({ event: 'auto-approve-note-failed', err: error }, 'could not post auto-approve note');
    });
  }

  return { noteToolProblems, noteAutomaticApprovals };
}
