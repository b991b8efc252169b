import type { RecordedSlackCall } from './fake-slack-api.js';

const ARGUMENTS_PREVIEW_CHARACTERS = 300;

/**
 * The part of a timeout message that makes the failure debuggable without a rerun: every method
 * called, in order, plus the arguments of the calls to the method the test was waiting for.
 */
export function describeSlackCalls(options: { calls: RecordedSlackCall[]; focusMethod: string }): string {
  if (options.calls.length === 0) return 'No Slack calls were recorded.';
  const sequence = options.calls.map((call) => call.method).join(', ');
  const focused = options.calls
    .filter((call) => call.method === options.focusMethod)
    .map((call, index) => `  ${options.focusMethod} #${index + 1}: ${preview(call.args)}`);
  return [`Recorded calls (in order): ${sequence}`, ...focused].join('\n');
}

function preview(args: Record<string, unknown>): string {
  const { token: _token, ...visible } = args;
  const json = JSON.stringify(visible);
  return json.length > ARGUMENTS_PREVIEW_CHARACTERS ? `${json.slice(0, ARGUMENTS_PREVIEW_CHARACTERS)}…` : json;
}
