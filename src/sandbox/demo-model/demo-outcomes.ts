import type { ToolOutcome } from './demo-prompt.js';

/** Lines of command output quoted at most, so a long listing does not flood the thread. */
const QUOTED_LINES = 12;
const QUOTED_JSON_CHARACTERS = 600;
const SHORT_OUTPUT_LINES = 6;

/** The bot's note on a call that ran with a human's version of its input (see `EditNote`). */
interface HumanEdit {
  version: number;
  editedBy: string[];
  changes: string[];
}

/** One paragraph on what came of a call: ran, failed, denied, expired, interrupted, edited. */
export function describeOutcome(outcome: ToolOutcome): string {
  const name = `\`${outcome.toolName}\``;
  const { output } = outcome;
  switch (output.type) {
    case 'execution-denied':
      return describeDenial(name, output.reason);
    case 'error-text':
      return output.value.startsWith('Interrupted:')
        ? `${name} was interrupted: the bot stopped while it was running, so it may or may not have finished. It was not run again; check the current state before trying it again.`
        : `${name} failed: ${output.value}`;
    case 'error-json':
      return `${name} failed:\n${codeBlock(JSON.stringify(output.value, null, 2).slice(0, QUOTED_JSON_CHARACTERS))}`;
    case 'text':
      return `${name} returned:\n${codeBlock(firstLines(output.value))}`;
    case 'json': {
      const { value } = output;
      const edit = humanEditOf(value);
      if (edit) return `${describeEdit(name, edit)}\n\n${describeResult(name, (value as { result?: unknown }).result)}`;
      return describeResult(name, value);
    }
    default:
      return `${name} finished.`;
  }
}

function describeDenial(name: string, reason: string | undefined): string {
  if (reason === undefined || reason === '') return `${name} was not run: it was declined.`;
  if (reason.startsWith('Declined by ')) {
    // The bot's reason ends with advice for the model ("This is a human decision, …"); the person's part comes first.
    const human = reason.split('. This is a human decision')[0] ?? reason;
    return `${name} was not run: ${lowerFirst(human)}. I won't try it again unless you ask me to.`;
  }
  if (reason.startsWith('Expired:')) {
    return `The approval request for ${name} expired before anyone decided, so it did not run. Ask me again if it is still needed.`;
  }
  return `${name} was not run: ${lowerFirst(reason.replace(/^Not run:\s*/, ''))}`;
}

function describeEdit(name: string, edit: HumanEdit): string {
  const who = edit.editedBy.length > 0 ? edit.editedBy.join(' and ') : 'An approver';
  const changes = edit.changes.map((change) => `\`${change}\``).join(', ');
  return `${who} edited ${name} before approving it, so version ${edit.version + 1} ran, not the one I proposed${changes === '' ? '' : ` (changed: ${changes})`}.`;
}

/** A command tool's result (`CommandToolOutput`), or whatever another tool returned. */
function describeResult(name: string, result: unknown): string {
  if (!isRecord(result)) return `${name} returned:\n${codeBlock(JSON.stringify(result ?? null).slice(0, QUOTED_JSON_CHARACTERS))}`;
  const stdout = typeof result.stdout === 'string' ? result.stdout.trim() : '';
  const stderr = typeof result.stderr === 'string' ? result.stderr.trim() : '';
  if (typeof result.error === 'string' && stdout === '' && stderr === '') return `${name} could not run: ${result.error}`;
  if ('exitCode' in result && result.exitCode !== 0) {
    const why = result.timedOut === true ? 'timed out' : `exit code ${String(result.exitCode)}`;
    return `${name} failed (${why}):\n${codeBlock(firstLines(stderr || stdout || String(result.error ?? 'no output')))}`;
  }
  if ('exitCode' in result) {
    if (stdout === '') return `${name} ran; it printed nothing.`;
    const lines = stdout.split('\n');
    // A short output ends with its outcome ("successfully rolled out"); a listing's last row is not one.
    const outcomeLine = lines.length <= SHORT_OUTPUT_LINES ? lines.findLast((line) => line.trim() !== '')?.trim() : undefined;
    return `${name} ran${outcomeLine === undefined ? '' : `: \`${outcomeLine}\``}\n${codeBlock(firstLines(stdout))}`;
  }
  return `${name} returned:\n${codeBlock(JSON.stringify(result, null, 2).slice(0, QUOTED_JSON_CHARACTERS))}`;
}

function humanEditOf(value: unknown): HumanEdit | undefined {
  if (!isRecord(value) || !isRecord(value.humanEdit)) return undefined;
  const { version, editedBy, changes } = value.humanEdit;
  return {
    version: typeof version === 'number' ? version : 1,
    editedBy: Array.isArray(editedBy) ? editedBy.map(String) : [],
    changes: Array.isArray(changes) ? changes.map(String) : [],
  };
}

function firstLines(text: string): string {
  const lines = text.split('\n');
  return lines.length <= QUOTED_LINES ? text : [...lines.slice(0, QUOTED_LINES), `… (${lines.length - QUOTED_LINES} more lines)`].join('\n');
}

function codeBlock(text: string): string {
  return `\`\`\`\n${text.replaceAll('```', "'''")}\n\`\`\``;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
