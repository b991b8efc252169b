import { z } from 'zod';
import { placeholderNames, placeholderProblem } from './env-placeholders.js';
import { urlCredentialsProblem } from './url-credentials.js';

/**
 * The `http:` section of `countersign.yml`: one `http_request` tool that may only reach the listed
 * base URLs. Headers set here are added when a request runs; `${VAR}` placeholders are read from
 * the environment then, so secrets stay out of the config, the cards, the logs and the model.
 */

export interface HttpBaseConfig {
  /** `https://api.example.com/v1/`: requests must stay on this origin and under this path. */
  url: string;
  /** What the model is told this base is for. */
  description?: string;
  /** Header name -> value template; `${VAR}` is read from the environment at execution. */
  headers: Record<string, string>;
}

export interface HttpConfig {
  bases: HttpBaseConfig[];
  /** The whole request, body included, is aborted after this. */
  timeoutSeconds: number;
  /** Bytes of response body read at most; the rest is not downloaded. */
  maxResponseBytes: number;
  /** Characters of response body passed to the model. */
  bodyLimit: number;
}

export const HTTP_REQUEST_TOOL_NAME = 'http_request';
/**
 * The input fields of `http_request` (see http-request-tool.ts), here so the config can check
 * policy conditions on them without loading the tool.
 */
export const HTTP_REQUEST_PARAMETERS = ['method', 'url', 'headers', 'body'] as const;
/** The methods `http_request` takes, in the upper case the model must send, for the same checks. */
export const HTTP_REQUEST_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export const DEFAULT_HTTP_TIMEOUT_SECONDS = 30;
export const DEFAULT_HTTP_MAX_RESPONSE_BYTES = 1024 * 1024;
export const DEFAULT_HTTP_BODY_LIMIT = 8000;

/** Headers the bot sets itself or that would let a request escape its base. */
export const RESERVED_HTTP_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'keep-alive', 'proxy-authorization', 'proxy-connection']);

/** Header names whose value is a credential: a literal value would put a secret in the config file. */
const SECRET_HEADER = /authorization|cookie|token|secret|password|api[-_]?key|^x-.*-key$/i;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export const headerTemplatesSchema = z
  .record(
    z.string().regex(HEADER_NAME, { error: 'is not a valid HTTP header name' }),
    z.string().superRefine((value, context) => {
      const problem = placeholderProblem(value);
      if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
      if (/[\r\n]/.test(value)) context.addIssue({ code: 'custom', message: 'must not contain line breaks' });
    }),
  )
  .superRefine((headers, context) => {
    const seen = new Set<string>();
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      if (seen.has(lower)) context.addIssue({ code: 'custom', path: [name], message: 'is set twice (header names are case-insensitive)' });
      seen.add(lower);
      if (RESERVED_HTTP_HEADERS.has(lower)) context.addIssue({ code: 'custom', path: [name], message: 'is set by the bot and cannot be configured' });
      if (SECRET_HEADER.test(name) && placeholderProblem(value) === undefined && placeholderNames(value).length === 0) {
        context.addIssue({
          code: 'custom',
          path: [name],
          message: 'looks like a credential: put the secret in an environment variable and write it as ${VAR_NAME}, e.g. "Bearer ${API_TOKEN}"',
        });
      }
    }
  });

const baseSchema = z.strictObject({
  url: z.string().transform((text, context) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      context.addIssue({ code: 'custom', message: 'must be an absolute http:// or https:// URL' });
      return z.NEVER;
    }
    const credentials = urlCredentialsProblem(url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') context.addIssue({ code: 'custom', message: 'must be an http:// or https:// URL' });
    else if (credentials !== undefined) context.addIssue({ code: 'custom', message: credentials });
    else if (url.search !== '' || url.hash !== '') context.addIssue({ code: 'custom', message: 'must not have a query or fragment' });
    else return url.pathname.endsWith('/') ? url.href : `${url.href}/`;
    return z.NEVER;
  }),
  description: z.string().trim().min(1, 'must not be empty').optional(),
  headers: z.preprocess((value) => (value === null ? undefined : value), headerTemplatesSchema.default({})),
});

const httpObjectSchema = z.strictObject({
  bases: z.array(baseSchema).min(1, 'must list at least one base URL'),
  timeoutSeconds: z.number().positive().max(600).default(DEFAULT_HTTP_TIMEOUT_SECONDS),
  maxResponseBytes: z.int().min(1024).max(100 * 1024 * 1024).default(DEFAULT_HTTP_MAX_RESPONSE_BYTES),
  bodyLimit: z.int().min(100).max(1_000_000).default(DEFAULT_HTTP_BODY_LIMIT),
});

export const httpSchema = httpObjectSchema.superRefine((http, context) => {
    const seen = new Map<string, number>();
    http.bases.forEach((base, index) => {
      const first = seen.get(base.url);
      if (first !== undefined) context.addIssue({ code: 'custom', path: ['bases', index, 'url'], message: `duplicates bases[${first}]` });
      else seen.set(base.url, index);
    });
  });

/** Keys of the section, for "did you mean" hints. */
export const HTTP_CONFIG_KEYS = [...new Set([httpObjectSchema, baseSchema].flatMap((schema) => Object.keys(schema.shape)))];
