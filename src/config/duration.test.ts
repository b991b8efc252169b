import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration, wholeMilliseconds } from './duration.js';

describe('parseDuration', () => {
  it.each([
    ['30s', 30_000],
    ['15m', 900_000],
    ['4h', 14_400_000],
    ['2d', 172_800_000],
    ['1h30m', 5_400_000],
    ['1d12h', 129_600_000],
    [' 24h ', 86_400_000],
  ])('reads %s', (text, expected) => {
    expect(parseDuration(text)).toBe(expected);
  });

  it.each(['', '0s', '30', '4 h', '4H', '1.5h', '-1h', '30m1h', 'h', 'forever', '1w'])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('formatDuration', () => {
  it.each([
    [30_000, '30s'],
    [5_400_000, '1h30m'],
    [86_400_000, '1d'],
    [0, '0s'],
  ])('writes %d as %s', (milliseconds, expected) => {
    expect(formatDuration(milliseconds)).toBe(expected);
  });

  it('round-trips what parseDuration reads', () => {
    for (const text of ['45s', '2h', '1d1h1m1s']) expect(formatDuration(parseDuration(text)!)).toBe(text);
  });
});

describe('wholeMilliseconds', () => {
  it.each([
    [1.33, 'h', 4_788_000],
    [168, 'h', 604_800_000],
    [0.00125, 'h', 4500],
    [1.1, 's', 1100],
    [0.0001, 's', 1],
  ] as const)('turns %d%s into %d ms', (amount, unit, expected) => {
    expect(wholeMilliseconds(amount, unit)).toBe(expected);
  });

  it('gives a whole number for every two-decimal number of hours up to 20', () => {
    for (let hundredths = 1; hundredths <= 2000; hundredths += 1) expect(Number.isInteger(wholeMilliseconds(hundredths / 100, 'h'))).toBe(true);
  });
});
