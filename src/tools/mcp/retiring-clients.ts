/**
 * Clients no longer in use whose calls may still be under way: replaced by a new connection while the
 * old one still works (reconnected for its event stream), or taken as lost (see `lost` in mcp-connection):
 * each is closed once the calls under way on it ended, since closing it fails a call that may be running
 * on the server, and the call would be told it failed.
 */
export function createRetiringClients<CLIENT extends { close(): Promise<void> }>() {
  const calls = new Map<CLIENT, number>();
  const retiring = new Set<CLIENT>();
  /**
   * Retired as lost, or closed here: nothing more is sent on them, though what was sent on one retired
   * is let finish. A closed client is marked too, so that a call whose request would be refused by it
   * (before anything is sent) is refused as not run, not recorded as run and failed.
   */
  const broken = new WeakSet<CLIENT>();
  const close = (client: CLIENT) => {
    broken.add(client);
    void client.close().catch(() => {});
  };
  return {
    /** Runs `call` on `client`, counted as under way on it. */
    async calling<RESULT>(client: CLIENT, call: () => Promise<RESULT>): Promise<RESULT> {
      calls.set(client, (calls.get(client) ?? 0) + 1);
      try {
        return await call();
      } finally {
        const left = (calls.get(client) ?? 1) - 1;
        if (left > 0) calls.set(client, left);
        else {
          calls.delete(client);
          if (retiring.delete(client)) close(client);
        }
      }
    },
    /**
     * Closes `client` now, or once its calls under way ended. `broken`: its connection was taken as lost,
     * so a call under way on it that has not sent its request yet must not send it (`isBroken`).
     */
    retire(client: CLIENT, { broken: lost = false }: { broken?: boolean } = {}): void {
      if (lost) broken.add(client);
      if (calls.has(client)) retiring.add(client);
      else close(client);
    },
    /** Whether `client` was retired and is still finishing its calls (so still heard: it is the same server). */
    isRetiring: (client: CLIENT): boolean => retiring.has(client),
    /** Whether `client` was retired as lost (see `retire`), or closed here: a request on it must not be sent. */
    isBroken: (client: CLIENT): boolean => broken.has(client),
    /** Closes every client still waiting for its calls (the server's handle is closing). */
    async closeAll(): Promise<void> {
      const waiting = [...retiring];
      retiring.clear();
      for (const client of waiting) broken.add(client);
      await Promise.all(waiting.map((client) => client.close().catch(() => {})));
    },
  };
}
