import { runInNewContext } from 'node:vm';

/**
 * Runs synchronous `work` under V8's watchdog and returns its result. A test's own timeout cannot
 * stop code that never yields (a backtracking regular expression, an endless loop): the worker
 * would hang and the run with it. The watchdog interrupts it instead, and the test fails with
 * "Script execution timed out". The limit is a hang detector, not a performance budget.
 */
export function interruptIfStuck<Result>(work: () => Result, { limitMs = 10_000 }: { limitMs?: number } = {}): Result {
  return runInNewContext('work()', { work }, { timeout: limitMs }) as Result;
}
