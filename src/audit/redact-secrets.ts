/**
 * Keys whose values are credentials often enough that the audit trail must not keep them: the trail
 * is read by more people (and SIEMs) than the tool ever was. It errs on hiding, so `max_tokens`
 * is hidden too; an auditor loses little by that.
 */
export const SECRET_KEY_PATTERN = /token|secret|password|authorization|api[_-]?key/i;

export const REDACTED = '[redacted]';

/**
 * A copy of a JSON-like value with the values of secret-looking keys replaced, at any depth. Only
 * keys are judged: free text that happens to contain a credential cannot be told apart reliably.
 */
export function redactSecrets(value: unknown): unknown {
  return redactValue(value, new WeakSet());
}

function redactValue(value: unknown, ancestors: WeakSet<object>): unknown {
  if (typeof value !== 'object' || value === null || !isArrayOrPlainObject(value)) return value;
  // Inputs are JSON from the model, but a cycle here would make the append throw later, in JSON.stringify.
  if (ancestors.has(value)) return '[circular]';
  ancestors.add(value);
  const copy = Array.isArray(value)
    ? value.map((item) => redactValue(item, ancestors))
    : Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, SECRET_KEY_PATTERN.test(key) ? REDACTED : redactValue(item, ancestors)]),
      );
  ancestors.delete(value);
  return copy;
}

/** Other objects (dates, buffers) are left for JSON.stringify to turn into what it always does. */
function isArrayOrPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return Array.isArray(value) || prototype === Object.prototype || prototype === null;
}
