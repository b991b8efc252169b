/**
 * Named points in a turn where a fault can be injected: the end-to-end tests kill (SIGKILL) or stop
 * (SIGSTOP) a bot process exactly there, to prove another process finishes the turn without losing
 * a decision or running a call twice. Production code only names the points; nothing happens at
 * them unless a hook is installed, which only the tests do (test/e2e/fault-preload.mjs), so the
 * bot reads no test-only settings.
 */
export type FaultPointName = 'after-decision' | 'after-claim' | 'before-tool' | 'after-marker' | 'after-tool' | 'mid-answer' | 'before-answer';

export type FaultHook = (name: FaultPointName) => void;

let installed: FaultHook | undefined;

export function installFaultHook(hook: FaultHook | undefined): void {
  installed = hook;
}

export function faultPoint(name: FaultPointName): void {
  installed?.(name);
}
