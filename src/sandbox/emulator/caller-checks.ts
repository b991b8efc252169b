import type { IncomingHttpHeaders } from 'node:http';

export interface CallerRefusal {
  status: number;
  error: string;
}

/**
 * Why a request to the emulator's port does not come from the bot (undefined when it may).
 *
 * Binding 127.0.0.1 keeps other machines out, not other web pages: a site open in the developer's
 * browser can POST here with a "simple" request (text/plain, no preflight) and a DNS-rebound name
 * (rebind.evil.example resolving to 127.0.0.1) even reads the answers. The bot's WebClient and
 * Bolt's respond() name the emulator by its loopback address and send no Origin, while a browser
 * always sends one on a cross-site POST and a rebound page's Host is its own name.
 */
export function refuseForeignCaller(options: { headers: IncomingHttpHeaders; port: number }): CallerRefusal | undefined {
  const host = options.headers.host?.toLowerCase();
  if (host !== `127.0.0.1:${options.port}` && host !== `localhost:${options.port}`) return { status: 421, error: 'slack-emulator: unknown host' };
  if (options.headers.origin !== undefined) return { status: 403, error: 'slack-emulator: not for web pages' };
  return undefined;
}

/** Slack's answers to a call without the bot's token and with another one. */
export function tokenError(options: { token: string | undefined; botToken: string | undefined }): string | undefined {
  if (options.botToken === undefined) return undefined;
  if (options.token === undefined || options.token === '') return 'not_authed';
  return options.token === options.botToken ? undefined : 'invalid_auth';
}
