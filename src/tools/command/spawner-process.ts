/**
 * The entry of the command spawner: a small, long-lived child of the bot process that starts
 * command tools for it. Forking copies the forking process's page tables, so a spawn from a bot
 * with a 300 MB heap costs milliseconds of the bot's CPU (on the event loop that also acks Slack);
 * from this process, whose heap stays tiny, it costs a fraction of that. Keep its imports small.
 */
import { registerHooks } from 'node:module';

// Run from the TypeScript sources (tests), Node strips the types but does not map the sources'
// `./x.js` imports to `./x.ts`; the built `dist/` needs no hook.
if (import.meta.url.endsWith('.ts')) {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      try {
        return nextResolve(specifier, context);
      } catch (error) {
        if (!/^\.\.?\//.test(specifier) || !specifier.endsWith('.js')) throw error;
        return nextResolve(`${specifier.slice(0, -'.js'.length)}.ts`, context);
      }
    },
  });
}

const { serveSpawnerRequests } = await import('./spawner-server.js');
serveSpawnerRequests();
