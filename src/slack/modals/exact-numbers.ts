/**
 * A number is recorded as a double, which holds about 16 significant digits: an id typed as
 * `1234567890123456789` (a Snowflake id, past 2^53) would be recorded, and run, as
 * 1234567890123456800, another id than the one the approver typed and read. These checks refuse a
 * number whose recorded value (JSON's shortest spelling of the double) is not the number written,
 * so every value the form prefills (already a double, written in that spelling) still comes back
 * unchanged, and `0.10` or `1e3` are the numbers they spell.
 */

/** Why `value`, read from `typed`, would be recorded as another number; undefined when it is the same number. */
export function inexactNumber(typed: string, value: number): string | undefined {
  const recorded = String(value);
  if (canonicalDecimal(typed) === canonicalDecimal(recorded)) return undefined;
  return `Too many digits to keep exactly: ${typed.trim()} would be sent as ${recorded}`;
}

/**
 * `JSON.parse`, and why the first number literal in `text` would be recorded as another number
 * (see `inexactNumber`). The reviver reads each literal's own text (`context.source`, Node 21 and
 * later). Throws as `JSON.parse` does.
 */
export function parseJsonExactly(text: string): { value: unknown; inexact?: string } {
  let inexact: string | undefined;
  const reviver: SourceReviver = (_key, value, context) => {
    if (inexact === undefined && typeof value === 'number' && context?.source !== undefined) inexact = inexactNumber(context.source, value);
    return value;
  };
  const value: unknown = JSON.parse(text, reviver as Parameters<typeof JSON.parse>[1]);
  return inexact === undefined ? { value } : { value, inexact };
}

type SourceReviver = (key: string, value: unknown, context?: { source?: string }) => unknown;

/**
 * One spelling per decimal number: `-1.50e2`, `-150` and `-150.0` all read `-15e1` (the
 * significant digits, then the power of ten). Every zero reads `0`: JSON writes `-0` as `0`.
 */
function canonicalDecimal(text: string): string | undefined {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(text.trim());
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  const significant = digits.replace(/0+$/, '');
  if (significant === '') return '0';
  // digits × 10^(exponent − fraction length), and each trailing zero dropped is one power of ten.
  const scale = Number(exponent) - fraction.length + (digits.length - significant.length);
  return `${sign === '-' ? '-' : ''}${significant}e${scale}`;
}
