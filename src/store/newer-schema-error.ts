import { CountersignError, ErrorCode, hasErrorCode } from '../errors/countersign-error.js';

/** What was stored in a format this release cannot read. */
export type StoredKind = 'step' | 'thread';

/**
 * A step or thread stored by a newer release than this one (a rolling deploy runs both on one Redis,
 * and a rollback leaves the newer one's data behind). It exists: it is not "gone", and this process
 * must neither close, unschedule, unindex nor overwrite it, only leave it to a process that reads
 * its format.
 */
export class NewerSchemaError extends CountersignError {
  override readonly name = 'NewerSchemaError';
  readonly code = ErrorCode.NewerSchema;
  readonly kind: StoredKind;
  readonly id: string;
  /** The schema version found, above `readable`. */
  readonly found: number;
  /** The newest schema version this release reads. */
  readonly readable: number;

  constructor({ kind, id, found, readable }: { kind: StoredKind; id: string; found: number; readable: number }) {
    super(`${kind} ${id} was stored with schema version ${found} by a newer countersign release; this one reads up to ${readable}`);
    this.kind = kind;
    this.id = id;
    this.found = found;
    this.readable = readable;
  }
}

export function isNewerSchemaError(error: unknown): error is NewerSchemaError {
  return hasErrorCode(error, ErrorCode.NewerSchema);
}

/** Throws `NewerSchemaError` for a record whose schema version is above the one this release reads. */
export function refuseNewerSchema(record: { kind: StoredKind; id: string; schemaVersion: unknown; readable: number }): void {
  const { schemaVersion: found, readable } = record;
  if (typeof found === 'number' && found > readable) throw new NewerSchemaError({ kind: record.kind, id: record.id, found, readable });
}

/** What `unlessNewerSchema` answers for a record a newer release stored. */
export const NEWER_SCHEMA = Symbol('stored by a newer release');

/** For a `.catch` of a read: `NEWER_SCHEMA` for a `NewerSchemaError`; any other error is thrown again. */
export function newerSchemaOrThrow(error: unknown): typeof NEWER_SCHEMA {
  if (isNewerSchemaError(error)) return NEWER_SCHEMA;
  throw error;
}

/**
 * `read()`, or `NEWER_SCHEMA` when what it read was stored by a newer release (any other error is
 * thrown): for a listing or a prefetch, which skips such a record and leaves it where it is.
 */
export function unlessNewerSchema<T>(read: () => T): T | typeof NEWER_SCHEMA {
  try {
    return read();
  } catch (error) {
    return newerSchemaOrThrow(error);
  }
}
