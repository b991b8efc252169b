/**
 * Durations in `countersign.yml` are written the way people say them: `30s`, `15m`, `4h`, `2d`, or
 * combined largest unit first (`1h30m`). Bare numbers are refused: `expiry: 30` could mean seconds,
 * minutes or hours, and guessing wrong either nags approvers or leaves a risky call open for days.
 */

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 } as const;
const DURATION_PATTERN = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

export const DURATION_HINT = 'must be a duration like 30s, 15m, 4h, 2d or 1h30m';

/** Milliseconds, or undefined when `text` is not a duration (including the empty string and `0s`). */
export function parseDuration(text: string): number | undefined {
  const match = DURATION_PATTERN.exec(text.trim());
  if (match === null) return undefined;
  const [, days, hours, minutes, seconds] = match;
  const total =
    Number(days ?? 0) * UNIT_MS.d + Number(hours ?? 0) * UNIT_MS.h + Number(minutes ?? 0) * UNIT_MS.m + Number(seconds ?? 0) * UNIT_MS.s;
  return total > 0 && Number.isSafeInteger(total) ? total : undefined;
}

/**
 * A number of hours or seconds from the config (`history.ttlHours`, `timeoutSeconds`) as whole
 * milliseconds, at least one: Redis's PEXPIRE refuses a fraction, and floating point makes one of
 * many decimal values (1.33 h is 4788000.000000001 ms), so every thread save would fail.
 */
export function wholeMilliseconds(amount: number, unit: 'h' | 's'): number {
  return Math.max(1, Math.round(amount * UNIT_MS[unit]));
}

/** The inverse of `parseDuration`, for messages and cards: 5_400_000 → `1h30m`. */
export function formatDuration(milliseconds: number): string {
  let rest = Math.max(0, Math.round(milliseconds / 1000)) * 1000;
  let text = '';
  for (const [unit, size] of Object.entries(UNIT_MS)) {
    const count = Math.floor(rest / size);
    if (count > 0) text += `${count}${unit}`;
    rest -= count * size;
  }
  return text === '' ? '0s' : text;
}
