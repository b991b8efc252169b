import { createHmac } from 'node:crypto';

/** Slack's request signature: `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>` under the signing secret. */
export function slackSignature(options: { signingSecret: string; timestamp: number; body: string }): string {
  const digest = createHmac('sha256', options.signingSecret).update(`v0:${options.timestamp}:${options.body}`).digest('hex');
  return `v0=${digest}`;
}

/** An Events API delivery as Slack sends it: the JSON envelope, signed, with Slack's header names. */
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

/** An interactivity payload (`payload=<json>`), form-encoded and signed. */
export async function postSlackInteraction(options: {
  url: string;
  signingSecret: string;
  payload: object;
  timestamp?: number;
  signature?: string;
}): Promise<Response> {
  return postSignedForm({ ...options, body: `payload=${encodeURIComponent(JSON.stringify(options.payload))}` });
}

/** A slash command: its fields form-encoded (no JSON payload), signed. */
export async function postSlashCommand(options: { url: string; signingSecret: string; fields: Record<string, string>; timestamp?: number }): Promise<Response> {
  return postSignedForm({ ...options, body: new URLSearchParams(options.fields).toString() });
}

/** Bolt compares the content type verbatim: `; charset=utf-8` would make it parse JSON and answer 400. */
function postSignedForm(options: { url: string; signingSecret: string; body: string; timestamp?: number; signature?: string }): Promise<Response> {
  return fetch(options.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...signatureHeaders(options) },
    body: options.body,
  });
}

function signatureHeaders(options: { signingSecret: string; body: string; timestamp?: number; signature?: string }): Record<string, string> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  return {
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': options.signature ?? slackSignature({ signingSecret: options.signingSecret, timestamp, body: options.body }),
  };
}
