import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ABORTED_BEFORE_START, spawnCommand, timedOutBeforeStart } from './run-command.js';

/**
 * A held command is `/bin/sh` waiting to be let go until the process-group watchdog holds its group.
 * Stopped then (its timeout, an abort), it never ran: it was reported as a command cut short by
 * SIGTERM, and the wait came out of its own `timeoutSeconds`, which the README says starts when it starts.
 */
const environment = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const neverHeld = () => new Promise<boolean>(() => {});
const heldAfter = (ms: number) => () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), ms));

describe.skipIf(process.platform !== 'linux')('held spawn: a command stopped while it is held', () => {
  it('reports a command whose timeout passes while it is held as not run, and never runs it', async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'countersign-held-')), 'ran');
    let groupGone = () => {};
    const gone = new Promise<void>((resolve) => {
      groupGone = resolve;
    });
    const result = await spawnCommand({
      argv: ['/bin/sh', '-c', `touch ${marker}`],
      timeoutMs: 200,
      outputLimit: 100,
      environment,
      hold: neverHeld,
      onGroupGone: () => groupGone(),
    });
    expect(result).toMatchObject({ exitCode: null, signal: null, timedOut: true, error: timedOutBeforeStart(200), neverRan: true });
    await gone;
    expect(existsSync(marker)).toBe(false);
  });

  it('reports a command aborted while it is held as aborted before start, without waiting out the kill grace', async () => {
    const controller = new AbortController();
    const result = spawnCommand({ argv: ['/bin/true'], timeoutMs: 10_000, killGraceMs: 60_000, outputLimit: 100, environment, abortSignal: controller.signal, hold: neverHeld });
    controller.abort();
    expect(await result).toMatchObject({ exitCode: null, signal: null, timedOut: false, error: ABORTED_BEFORE_START, neverRan: true });
  });

  it('gives a held command its whole timeout once it is let go', async () => {
    const result = await spawnCommand({ argv: ['/bin/sleep', '0.4'], timeoutMs: 700, outputLimit: 100, environment, hold: heldAfter(500) });
    expect(result).toMatchObject({ exitCode: 0, signal: null, timedOut: false });
    expect(result.error).toBeUndefined();
    expect(result.neverRan).toBeUndefined();
  });

  it('still reports a command let go and then timed out as one that ran and was stopped', async () => {
    const result = await spawnCommand({ argv: ['/bin/sleep', '5'], timeoutMs: 200, outputLimit: 100, environment, hold: () => Promise.resolve(true) });
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGTERM', timedOut: true, error: 'timed out after 200 ms' });
    // It may have done anything: the turn records it as run.
    expect(result.neverRan).toBeUndefined();
  });
});
