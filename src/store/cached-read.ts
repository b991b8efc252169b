/**
 * `read`'s answer, read again once older than the `maxAgeMs` a caller gives; a failed read is not
 * kept (unless a newer one replaced it meanwhile), so the next caller asks again. Nor is an answer
 * `keep` declines: it answers the callers that shared its read, and the next caller asks again.
 */
export function cachedRead<T>(read: () => Promise<T>, { keep = () => true }: { keep?: (answer: T) => boolean } = {}): { get(maxAgeMs: number): Promise<T>; forget(): void } {
  let kept: { answer: Promise<T>; at: number } | undefined;
  return {
    get(maxAgeMs) {
      if (kept === undefined || performance.now() - kept.at >= maxAgeMs) {
        const answer: Promise<T> = read().then(
          (value) => {
            if (!keep(value) && kept?.answer === answer) kept = undefined;
            return value;
          },
          (error: unknown) => {
            if (kept?.answer === answer) kept = undefined;
            throw error;
          },
        );
        kept = { answer, at: performance.now() };
      }
      return kept.answer;
    },
    forget() {
      kept = undefined;
    },
  };
}
