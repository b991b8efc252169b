import type { IncomingHttpHeaders } from 'node:http';

/**
 * Argument names whose form-encoded value is a JSON document. WebClient JSON-stringifies every
 * non-primitive argument, and Slack parses these back per method; an allow-list keeps a message
 * text such as `{"a":1}` a string, which a "looks like JSON" heuristic would get wrong.
 */
const JSON_ARGUMENT_NAMES = new Set([
  'attachments',
  'blocks',
  'chunks',
  'loading_messages',
  'metadata',
  'prompts',
  'unfurls',
  'user_auth_blocks',
  'view',
]);

export type SlackArguments = Record<string, unknown>;

export interface SlackRequestArguments {
  args: SlackArguments;
  token: string | undefined;
}

/**
 * Turns a Web API request into the arguments the caller passed. Primitive form values stay
 * strings (a boolean arrives as `'true'`), exactly what Slack itself receives.
 */
export function parseSlackRequestArguments(options: { headers: IncomingHttpHeaders; body: string }): SlackRequestArguments {
  const contentType = options.headers['content-type'] ?? '';
  const args = contentType.startsWith('application/json') ? parseJsonBody(options.body) : parseFormBody(options.body);
  const authorization = options.headers.authorization;
  const bearerToken = authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : undefined;
  const token = bearerToken ?? (typeof args.token === 'string' ? args.token : undefined);
  return { args, token };
}

function parseJsonBody(body: string): SlackArguments {
  if (body.trim() === '') return {};
  const parsed: unknown = JSON.parse(body);
  return isPlainObject(parsed) ? parsed : {};
}

function parseFormBody(body: string): SlackArguments {
  const args: SlackArguments = {};
  for (const [name, value] of new URLSearchParams(body)) {
    args[name] = JSON_ARGUMENT_NAMES.has(name) ? parseJsonOrKeep(value) : value;
  }
  return args;
}

function parseJsonOrKeep(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    // Slack would answer invalid_arguments; keeping the raw string lets the method handler decide.
    return value;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
