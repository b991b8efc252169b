import { createHmac } from 'node:crypto';

/**
 * Drives Bolt's real HTTP receiver the way Slack does: signed bodies and Slack's header names.
 * The payload builders live next door and are re-exported so tests import one module.
 */
export { appMentionEnvelope, messageEnvelope } from './slack-event-envelopes.js';
export { blockActionsPayload, viewSubmissionPayload } from './slack-interaction-payloads.js';

export function slackSignature(options: { signingSecret: string; timestamp: number; body: string }): string {
  const digest = createHmac('sha256', options.signingSecret).update(`v0:${options.timestamp}:${options.body}`).digest('hex');
  return `v0=${digest}`;
}

export async function postSlackEvent(options: {
  url: string;
  signingSecret: string;
  envelope: object;
  timestamp?: number;
  signature?: string;
  retryNum?: number;
  /** Sent with retryNum; Slack's most common reason is a listener that did not answer in 3 s. */
  retryReason?: string;
}): Promise<Response> {
  const body = JSON.stringify(options.envelope);
  const retryHeaders: Record<string, string> =
    options.retryNum === undefined
      ? {}
      : { 'x-slack-retry-num': String(options.retryNum), 'x-slack-retry-reason': options.retryReason ?? 'http_timeout' };
  return fetch(options.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signatureHeaders({ ...options, body }), ...retryHeaders },
    body,
  });
}

/** Bolt compares the content type verbatim: `; charset=utf-8` would make it parse JSON and answer 400. */
export async function postSlackInteraction(options: {
  url: string;
  signingSecret: string;
  payload: object;
  timestamp?: number;
  signature?: string;
}): Promise<Response> {
  const body = `payload=${encodeURIComponent(JSON.stringify(options.payload))}`;
  return fetch(options.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...signatureHeaders({ ...options, body }) },
    body,
  });
}

function signatureHeaders(options: { signingSecret: string; body: string; timestamp?: number; signature?: string }): Record<string, string> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  return {
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': options.signature ?? slackSignature({ signingSecret: options.signingSecret, timestamp, body: options.body }),
  };
}
