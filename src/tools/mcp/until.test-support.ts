/** Polls `probe` every 20 ms until it answers something truthy, which it returns; throws naming `message` after `timeoutMs`. */
export async function until<T>(probe: () => T | undefined | false, message: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${message}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
