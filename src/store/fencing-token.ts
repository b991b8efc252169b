import { randomInt } from 'node:crypto';

/**
 * A fencing token is `<counter>.<nonce>`. The counter is the previous token's plus one, and never
 * below the issuer's clock in milliseconds (the thread's counter may have expired); the nonce is
 * random digits drawn by each acquisition. Tokens are only ever compared for equality, and the
 * nonce is what keeps two acquisitions apart when the counter cannot: a failover that lost the
 * newest token (replication is asynchronous) leaves the promoted replica with an older one, and
 * the next holder would otherwise be given the lost holder's token and both would pass every fence.
 * Digits only, so a release that read tokens as plain numbers still parses one as its counter.
 */
const NONCE_DIGITS = 12;

/** A fresh nonce for one acquisition. */
export function newTokenNonce(): string {
  return String(randomInt(10 ** NONCE_DIGITS)).padStart(NONCE_DIGITS, '0');
}

/** The token after `last` (a plain number from an older release, or `<counter>.<nonce>`). */
export function nextFencingToken({ last, now, nonce }: { last: string | undefined; now: number; nonce: string }): string {
  const counter = Number(/^\d+/.exec(last ?? '')?.[0] ?? 0);
  return `${Math.max(counter + 1, now)}.${nonce}`;
}
