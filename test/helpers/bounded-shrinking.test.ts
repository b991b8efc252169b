import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedShrinking } from './bounded-shrinking.js';

/** Each run of the predicate takes a second on this clock; the property fails from 500,000 up, which takes about twenty shrinks to pin down. */
function slowProperty() {
  const state = { clock: 0, runs: 0, firstFailure: undefined as number | undefined };
  const property = fc.property(fc.integer({ min: 0, max: 1_000_000 }), (value) => {
    state.clock += 1000;
    state.runs += 1;
    if (value >= 500_000) state.firstFailure ??= state.runs;
    expect(value).toBeLessThan(500_000);
  });
  return { state, property };
}

function failureOf(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('the property passed');
}

describe('boundedShrinking', () => {
  it('stops shrinking the given time after the first failure and reports the smallest failure found so far', () => {
    const { state, property } = slowProperty();
    const error = failureOf(() => fc.assert(property, { seed: 42, plugins: [boundedShrinking({ seconds: 5, now: () => state.clock })] }));
    // Five more runs, five seconds: then the run stops, as a failure.
    expect(state.runs - (state.firstFailure ?? Number.NaN)).toBe(5);
    expect(error.message).toMatch(/^Property failed after \d+ tests\n\{ seed: 42, path: "[\d:]+", endOnFailure: true \}/);
    expect(error.message).toMatch(/Shrinking stopped after 5 s \(PROPERTY_SHRINK_SECONDS\): a smaller counterexample may exist\.$/);
    const counterexample = Number(/Counterexample: \[(\d+)\]/.exec(error.message)?.[1]);
    expect(counterexample).toBeGreaterThanOrEqual(500_000);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('leaves a shrink that ends in time as fast-check reports it', () => {
    const { state, property } = slowProperty();
    const error = failureOf(() => fc.assert(property, { seed: 42, plugins: [boundedShrinking({ seconds: 3600, now: () => state.clock })] }));
    expect(error.message).toContain('Counterexample: [500000]');
    expect(error.message).not.toContain('Shrinking stopped');
  });

  it('bounds an asynchronous property the same way', async () => {
    let clock = 0;
    const property = fc.asyncProperty(fc.integer({ min: 0, max: 1_000_000 }), async (value) => {
      clock += 1000;
      expect(value).toBeLessThan(500_000);
    });
    await expect(fc.assert(property, { seed: 42, plugins: [boundedShrinking({ seconds: 5, now: () => clock })] })).rejects.toThrow(/Shrinking stopped after 5 s/);
  });

  it('never cuts a passing property short', () => {
    let clock = 0;
    let runs = 0;
    fc.assert(
      fc.property(fc.integer(), () => {
        clock += 1000;
        runs += 1;
      }),
      { numRuns: 50, plugins: [boundedShrinking({ seconds: 1, now: () => clock })] },
    );
    expect(runs).toBe(50);
  });
});
