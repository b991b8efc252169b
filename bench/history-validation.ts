// Loading a thread's history, validated as untrusted (src/agent/history.ts), as the history grows:
// a process's first load of a history (every message validated against the AI SDK's schema) and a
// later load with one message appended (only that one validated), in alternating rounds in one
// process. `npm run build && node bench/history-validation.ts`; ROUNDS and LOADS change the scale.
import { parseHistory } from '../dist/agent/history.js';
import { createValidatedMessages } from '../dist/agent/validated-messages.js';

const rounds = Number(process.env.ROUNDS ?? 5);
const loads = Number(process.env.LOADS ?? 200);

/** One exchange as the bot stores it: the mention, the call, its approval and result, the answer. */
const exchange = (index: number) => [
  { role: 'user', content: `<@UBOT> please restart the worker ${index} ${'lorem ipsum '.repeat(40)}` },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: `call_${index}`, toolName: 'restart_service', input: { service: 'worker', namespace: 'prod' } }, { type: 'tool-approval-request', approvalId: `a${index}`, toolCallId: `call_${index}` }] },
  { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: `a${index}`, approved: true }, { type: 'tool-result', toolCallId: `call_${index}`, toolName: 'restart_service', output: { type: 'json', value: { exitCode: 0, stdout: 'deployment.apps/worker restarted\n', stderr: '' } } }] },
  { role: 'assistant', content: [{ type: 'text', text: `Restarted the worker (${index}).` }] },
];

function microsecondsPerLoad(run: () => void): number {
  const startedAt = performance.now();
  for (let load = 0; load < loads; load += 1) run();
  return ((performance.now() - startedAt) * 1000) / loads;
}

for (const exchanges of [1, 10, 100]) {
  const history = Array.from({ length: exchanges }, (_, index) => exchange(index)).flat();
  const stored = JSON.stringify(history);
  // As read from the store: fresh objects every load.
  const storedAppended = JSON.stringify([...history, { role: 'user', content: 'and the scheduler?' }]);
  const firstLoads: number[] = [];
  const laterLoads: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    // Every load a first one: a cache that has seen nothing.
    firstLoads.push(microsecondsPerLoad(() => parseHistory(JSON.parse(stored), createValidatedMessages({ maxCharacters: 4 * 1024 * 1024 }))));
    const warm = createValidatedMessages({ maxCharacters: 4 * 1024 * 1024 });
    parseHistory(JSON.parse(stored), warm);
    laterLoads.push(microsecondsPerLoad(() => parseHistory(JSON.parse(storedAppended), warm)));
  }
  const median = (values: number[]) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)] ?? Number.NaN;
  const first = median(firstLoads);
  const later = median(laterLoads);
  console.log(
    `${exchanges} exchange${exchanges > 1 ? 's' : ''} (${history.length} messages, ${stored.length} characters): first load ${first.toFixed(0)} µs, a later load with one new message ${later.toFixed(0)} µs (both include JSON.parse), later ÷ first ${(later / first).toFixed(2)} (medians of ${rounds} rounds of ${loads})`,
  );
}
