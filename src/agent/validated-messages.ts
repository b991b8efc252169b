/**
 * Messages already found valid, by their JSON, so that a thread's history is validated once per
 * process rather than at every load: validating one message against the AI SDK's schema (zod) costs
 * 25–50 µs, serialising it about 1, so a load of a 400-message history cost 10.7 ms before and 0.8
 * ms with one new message (`bench/history-validation.ts`).
 * Validity depends on the message alone, so an identical message needs no second look; anything
 * new or changed (another version's, a tampered store's) is validated as before. Only successes are
 * kept, oldest dropped first past `maxCharacters`.
 */
export interface ValidatedMessages {
  has(json: string): boolean;
  add(json: string): void;
}

export function createValidatedMessages({ maxCharacters }: { maxCharacters: number }): ValidatedMessages {
  // Insertion order is age: a message seen again is moved to the young end.
  const known = new Map<string, number>();
  let characters = 0;
  return {
    has(json) {
      if (!known.has(json)) return false;
      known.delete(json);
      known.set(json, json.length);
      return true;
    },
    add(json) {
      if (known.has(json) || json.length > maxCharacters) return;
      known.set(json, json.length);
      characters += json.length;
      for (const [oldest, length] of known) {
        if (characters <= maxCharacters) break;
        known.delete(oldest);
        characters -= length;
      }
    },
  };
}
