import { CountersignError, ErrorCode, hasErrorCode } from '../errors/countersign-error.js';

/**
 * A call's executing marker reached the primary but fewer replicas than required confirmed it
 * within the wait, or the primary did not fsync it to its append-only file in time (`onDisk`): a
 * failover or a restart now could lose it and let a successor run the call again, so the call is
 * not started. The message is what the model is told (the tool's error result).
 */
export class ReplicationNotConfirmedError extends CountersignError {
  override readonly name = 'ReplicationNotConfirmedError';
  readonly code = ErrorCode.ReplicationNotConfirmed;
  /** Replicas that had to confirm the marker. */
  readonly wanted: number;
  /** Replicas that did within the wait. */
  readonly confirmed: number;
  /** False: the replicas were not the problem, the primary's append-only file was (`WAITAOF`). */
  readonly onDisk: boolean | undefined;

  constructor({ wanted, confirmed, timeoutMs, onDisk }: { wanted: number; confirmed: number; timeoutMs: number; onDisk?: false }) {
    super(
      onDisk === false
        ? `Not run: the bot could not confirm that its record of this call was written to Redis's append-only file on disk (within ${timeoutMs} ms), ` +
            'so it did not start the call: a Redis restart could otherwise run it twice. Nothing was changed.'
        : `Not run: the bot could not confirm that its record of this call reached ${wanted} Redis ${wanted === 1 ? 'replica' : 'replicas'} ` +
            `(${confirmed} confirmed within ${timeoutMs} ms), so it did not start the call: a Redis failover could otherwise run it twice. Nothing was changed.`,
    );
    this.wanted = wanted;
    this.confirmed = confirmed;
    this.onDisk = onDisk;
  }
}

export function isReplicationNotConfirmedError(error: unknown): error is ReplicationNotConfirmedError {
  return hasErrorCode(error, ErrorCode.ReplicationNotConfirmed);
}
