import { CountersignError, ErrorCode } from '../errors/countersign-error.js';

/** The model sent nothing for too long; the turn fails with this instead of waiting forever. */
export class ModelTimeoutError extends CountersignError {
  override readonly name = 'ModelTimeoutError';
  readonly code = ErrorCode.ModelTimeout;
  readonly timeoutMs: number;
  constructor(options: { timeoutMs: number }) {
    super(`the model sent nothing for ${(options.timeoutMs / 1000).toLocaleString('en', { maximumFractionDigits: 1 })} s`);
    this.timeoutMs = options.timeoutMs;
  }
}

export interface ModelWatchdog {
  /** Output arrived: the model is alive. */
  touch(): void;
  toolStarted(): void;
  toolFinished(): void;
  stop(): void;
  readonly signal: AbortSignal;
}

/**
 * Aborts when the model has been silent for `timeoutMs` — before its response headers as much as
 * between chunks — but never while a tool runs: a slow `kubectl` is not a hung model. (The AI SDK's
 * `stepMs` counts tools too, and its chunk timeouts start only once headers have arrived.)
 */
export function startModelWatchdog({ timeoutMs }: { timeoutMs: number }): ModelWatchdog {
  const controller = new AbortController();
  let runningTools = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = runningTools > 0 || controller.signal.aborted ? undefined : setTimeout(() => controller.abort(new ModelTimeoutError({ timeoutMs })), timeoutMs);
  };
  arm();
  return {
    signal: controller.signal,
    touch: arm,
    toolStarted() {
      runningTools += 1;
      arm();
    },
    toolFinished() {
      runningTools = Math.max(0, runningTools - 1);
      arm();
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
