import { readdirSync, readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { lowerThreadPriority, lowerThreadsBesideFront } from './thread-priority.js';

/** Nice of each thread of this process, by thread id (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${process.pid}/task`)) {
    const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
    nices.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return nices;
}

describe('lowerThreadPriority', () => {
  it.runIf(process.platform === 'linux')('lowers the calling thread only: the process’s other threads keep their priority', async () => {
    const before = threadNices();
    // A thread of its own, so this test's process keeps its priority.
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       import(${JSON.stringify(new URL('./thread-priority.ts', import.meta.url).href)}).then(
         ({ lowerThreadPriority }) => parentPort.postMessage(lowerThreadPriority({ nice: 7 })),
         (error) => parentPort.postMessage({ lowered: false, reason: String(error) }),
       );
       setInterval(() => {}, 1000);`,
      { eval: true },
    );
    try {
      const outcome = await new Promise<{ lowered: boolean; threadId?: number; reason?: string }>((resolve) => worker.once('message', resolve));
      expect(outcome).toMatchObject({ lowered: true, nice: 7 });
      const after = threadNices();
      expect(after.get(outcome.threadId as number)).toBe(7);
      expect(after.get(process.pid)).toBe(before.get(process.pid));
      expect([...after].filter(([, nice]) => nice === 7).map(([tid]) => tid)).toEqual([outcome.threadId]);
    } finally {
      await worker.terminate();
    }
  });

  it('leaves the priority alone at 0, and where there is no thread id to set it on', () => {
    const calls: Array<[number, number]> = [];
    const setThreadPriority = (threadId: number, nice: number) => void calls.push([threadId, nice]);
    expect(lowerThreadPriority({ nice: 0, threadId: () => 42, setThreadPriority })).toEqual({ lowered: false, reason: 'COUNTERSIGN_TURN_THREAD_NICE is 0' });
    expect(lowerThreadPriority({ nice: 10, threadId: () => undefined, setThreadPriority })).toMatchObject({ lowered: false });
    expect(calls).toEqual([]);
  });

  it('reports a refused setpriority instead of failing the bot', () => {
    const outcome = lowerThreadPriority({
      nice: 10,
      threadId: () => 42,
      setThreadPriority: () => {
        throw new Error('EACCES');
      },
    });
    expect(outcome).toEqual({ lowered: false, reason: 'setpriority failed: EACCES' });
  });
});

describe('lowerThreadsBesideFront', () => {
  it("lowers every thread but the front's (the runtime's helpers have no name to tell them by on Node 22), and skips one it cannot lower", () => {
    const set: Array<[number, number]> = [];
    const lowered = lowerThreadsBesideFront({
      nice: 10,
      frontThreadId: 100,
      threadIds: () => [100, 101, 102, 103, 104],
      setThreadPriority: (threadId, nice) => {
        if (threadId === 102) throw new Error('ESRCH: the thread ended');
        set.push([threadId, nice]);
      },
    });
    expect(set).toEqual([
      [101, 10],
      [103, 10],
      [104, 10],
    ]);
    expect(lowered).toEqual([101, 103, 104]);
  });
});
