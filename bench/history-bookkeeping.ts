// What a save costs beside the write itself, as a history grows: trimming it to the caps and the
// digest of every message that lets a save append instead of rewrite (src/agent/history.ts,
// src/store/history-write-plan.ts). Each is timed against its former implementation, kept below as
// the baseline, in alternating rounds in one process. `npm run build && node bench/history-bookkeeping.ts`;
// ROUNDS and REPEATS change the scale.
import { createHash } from 'node:crypto';
import { trimHistory } from '../dist/agent/history.js';
import { digestOf } from '../dist/store/history-write-plan.js';

const rounds = Number(process.env.ROUNDS ?? 7);
const repeats = Number(process.env.REPEATS ?? 300);

type Message = { role: string; content: unknown };
type Limits = { maxMessages: number; maxBytes: number };

/** One exchange as the bot stores it: the mention, the call, its approval and result, the answer. */
const exchange = (index: number): Message[] => [
  { role: 'user', content: `<@UBOT> please restart the worker ${index} ${'lorem ipsum '.repeat(40)}` },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: `call_${index}`, toolName: 'restart_service', input: { service: 'worker', namespace: 'prod' } }, { type: 'tool-approval-request', approvalId: `a${index}`, toolCallId: `call_${index}` }] },
  { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: `a${index}`, approved: true }, { type: 'tool-result', toolCallId: `call_${index}`, toolName: 'restart_service', output: { type: 'json', value: { exitCode: 0, stdout: 'deployment.apps/worker restarted\n', stderr: '' } } }] },
  { role: 'assistant', content: [{ type: 'text', text: `Restarted the worker (${index}).` }] },
];

/** The former trim: the whole remaining history serialized again after every cut. */
function formerTrim(messages: Message[], limits: Limits): Message[] {
  let trimmed = messages;
  while (trimmed.length > limits.maxMessages || Buffer.byteLength(JSON.stringify(trimmed)) > limits.maxBytes) {
    const nextUser = trimmed.findIndex((message, index) => index > 0 && message.role === 'user');
    if (nextUser <= 0) break;
    trimmed = trimmed.slice(nextUser);
  }
  return trimmed;
}

const formerDigest = (serialized: string) => createHash('sha1').update(serialized).digest('base64');

function microseconds(run: () => unknown): number {
  const startedAt = performance.now();
  for (let repeat = 0; repeat < repeats; repeat += 1) run();
  return ((performance.now() - startedAt) * 1000) / repeats;
}

const median = (values: number[]) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)] ?? Number.NaN;

for (const exchanges of [2, 10, 100]) {
  const history = Array.from({ length: exchanges }, (_, index) => exchange(index)).flat();
  const serialized = history.map((message) => JSON.stringify(message));
  const bytes = Buffer.byteLength(JSON.stringify(history));
  // Under the caps (most saves); one exchange over (a thread at its cap, each turn cuts the oldest);
  // a third over (a large tool output, or lowered caps).
  const cases: Array<[string, Limits]> = [
    ['trim, under the caps', { maxMessages: 1_000, maxBytes: bytes }],
    ['trim, cutting one exchange', { maxMessages: 1_000, maxBytes: bytes - 1 }],
    ['trim, cutting a third', { maxMessages: 1_000, maxBytes: Math.floor((bytes * 2) / 3) }],
  ];
  const rows: Array<[string, () => unknown, () => unknown]> = [
    ...cases.map(([label, limits]): [string, () => unknown, () => unknown] => [label, () => formerTrim(history, limits), () => trimHistory(history as never, limits)]),
    ['digest every message', () => serialized.map(formerDigest), () => serialized.map(digestOf)],
  ];
  for (const [label, former, current] of rows) {
    const formerTimes: number[] = [];
    const currentTimes: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      formerTimes.push(microseconds(former));
      currentTimes.push(microseconds(current));
    }
    const before = median(formerTimes);
    const after = median(currentTimes);
    console.log(`${exchanges} exchange${exchanges > 1 ? 's' : ''} (${history.length} messages, ${bytes} B), ${label}: ${before.toFixed(1)} → ${after.toFixed(1)} µs (×${(after / before).toFixed(2)}, medians of ${rounds} rounds of ${repeats})`);
  }
}
