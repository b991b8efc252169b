import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { DeliveryFailed, DeliveryRefused } from '../emulator/delivery/bot-receiver.js';
import type { SlackDelivery } from '../emulator/delivery/slack-delivery.js';
import { sendJson } from '../emulator/loopback-http.js';
import { checkRequest, SANDBOX_REQUESTS, type KnownIds } from './api-requests.js';

/** The page sends small JSON documents; anything larger is a mistake, not a message. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface ApiRouteContext {
  delivery: SlackDelivery;
  known: KnownIds;
  /** `@alice` → `<@U0ALICE>`, as Slack's composer does. */
  linkMentions: (text: string) => string;
}

/** A POST route: the body it accepts and what it does with a valid one. */
interface Route<T> {
  schema: z.ZodType<T>;
  run(options: { value: T; context: ApiRouteContext }): Promise<{ status: number; body: unknown }>;
}

const route = <T>(definition: Route<T>): Route<T> => definition;
const ok = (body: object = {}) => ({ status: 200, body: { ok: true, ...body } });
/** `{ ok: true }` once the bot has taken the request, for deliveries with nothing else to say. */
async function done(delivery: Promise<void>) {
  await delivery;
  return ok();
}

/** The POST routes of sandbox-api.ts: each turns what the person did into Slack's signed request. */
export const API_POST_ROUTES: Record<string, Route<unknown>> = {
  '/api/messages': route({
    schema: SANDBOX_REQUESTS.postMessage,
    run: async ({ value, context }) => ok(await context.delivery.postMessage({ ...value, text: context.linkMentions(value.text) })),
  }),
  '/api/actions': route({ schema: SANDBOX_REQUESTS.action, run: async ({ value, context }) => done(context.delivery.clickAction(value)) }),
  '/api/views/submit': route({
    schema: SANDBOX_REQUESTS.viewSubmit,
    run: async ({ value, context }) => {
      const outcome = await context.delivery.submitView(value);
      return { status: outcome.ok ? 200 : 502, body: outcome };
    },
  }),
  '/api/views/close': route({ schema: SANDBOX_REQUESTS.viewClose, run: async ({ value, context }) => done(context.delivery.closeView(value)) }),
  '/api/commands': route({ schema: SANDBOX_REQUESTS.command, run: async ({ value, context }) => done(context.delivery.runCommand(value)) }),
};

export async function serveApiPost(options: { route: Route<unknown>; request: IncomingMessage; response: ServerResponse; context: ApiRouteContext }): Promise<void> {
  const { response } = options;
  const body = await readJsonBody(options.request);
  if (!body.ok) return sendJson({ response, status: body.status, body: { ok: false, error: body.error } });
  const checked = checkRequest({ schema: options.route.schema, body: body.value, known: options.context.known });
  if (!checked.ok) return sendJson({ response, status: 400, body: { ok: false, error: checked.error } });
  try {
    sendJson({ response, ...(await options.route.run({ value: checked.value, context: options.context })) });
  } catch (error) {
    if (error instanceof DeliveryRefused) return sendJson({ response, status: 400, body: { ok: false, error: error.message } });
    if (error instanceof DeliveryFailed) return sendJson({ response, status: 502, body: { ok: false, error: error.message } });
    throw error;
  }
}

/**
 * Only `application/json`: a web page can send any other site a text/plain or form POST without asking,
 * but a JSON one needs a CORS preflight, which the sandbox never approves (own-page-requests.ts).
 */
async function readJsonBody(request: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; status: number; error: string }> {
  if (!isJsonContentType(request.headers['content-type'])) return { ok: false, status: 415, error: 'body: send it as content-type: application/json' };
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > MAX_BODY_BYTES) return { ok: false, status: 400, error: 'body: larger than 1 MiB' };
    chunks.push(buffer);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch {
    return { ok: false, status: 400, error: 'body: not a JSON document' };
  }
}

function isJsonContentType(header: string | undefined): boolean {
  return header?.split(';')[0]?.trim().toLowerCase() === 'application/json';
}
