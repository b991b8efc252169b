/**
 * One process-wide clock for Slack message timestamps ("seconds.microseconds"), shared by the fake
 * Web API and the payload builders: ts stay wall-clock-like, strictly increasing and unique, so a
 * bot reply always sorts after the mention it answers, as in Slack.
 */
const MICROSECONDS_PER_SECOND = 1_000_000;
let lastMicroseconds = 0;

export function nextSlackTs(): string {
  lastMicroseconds = Math.max(Date.now() * 1000, lastMicroseconds + 1);
  return formatTs(lastMicroseconds);
}

/** Seeded messages may carry a future ts; later generated ts must still sort after them. */
export function advanceSlackTsPast(ts: string): void {
  lastMicroseconds = Math.max(lastMicroseconds, tsToMicroseconds(ts));
}

export function compareSlackTs(left: string, right: string): number {
  return tsToMicroseconds(left) - tsToMicroseconds(right);
}

function tsToMicroseconds(ts: string): number {
  const [seconds = '0', fraction = ''] = ts.split('.');
  return Number(seconds) * MICROSECONDS_PER_SECOND + Number(fraction.padEnd(6, '0').slice(0, 6));
}

function formatTs(microseconds: number): string {
  const seconds = Math.floor(microseconds / MICROSECONDS_PER_SECOND);
  const fraction = microseconds % MICROSECONDS_PER_SECOND;
  return `${seconds}.${String(fraction).padStart(6, '0')}`;
}
