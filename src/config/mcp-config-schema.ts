import { z } from 'zod';
import { placeholderProblem } from './env-placeholders.js';
import { headerTemplatesSchema } from './http-config-schema.js';
import { urlCredentialsProblem } from './url-credentials.js';

/**
 * The `mcpServers:` section of `countersign.yml`: MCP servers whose tools the agent may call, over
 * stdio (`command` + `args` + `env`) or Streamable HTTP (`url` + `headers`). Their tools are named
 * `<server>.<tool>` for policy rules and cards, and need approval unless a policy rule says
 * otherwise: what a server says about its tools (`readOnlyHint`) is a hint, trusted only when
 * `trustReadOnlyHint` is set for that server.
 */

interface McpServerCommon {
  /** A single tool call is abandoned after this. */
  timeoutSeconds: number;
  /** Starting the server (or reaching it) and listing its tools must finish within this. */
  connectTimeoutSeconds: number;
  /** Characters of a tool result passed to the model. */
  outputLimit: number;
  /**
   * Tools the server marks `readOnlyHint: true` (and not `destructiveHint`) run without approval.
   * Off by default: annotations come from the server and are not a security boundary.
   */
  trustReadOnlyHint: boolean;
  /** Globs of the server's own tool names to offer; absent means all. */
  include?: string[];
  /** Globs of the server's own tool names never to offer. */
  exclude: string[];
}

export interface McpStdioServerConfig extends McpServerCommon {
  transport: 'stdio';
  command: string;
  args: string[];
  /** Added to the bot's environment minus its secrets; values may use `${VAR}`. */
  env: Record<string, string>;
  cwd?: string;
}

export interface McpHttpServerConfig extends McpServerCommon {
  transport: 'http';
  url: string;
  /** Header name -> value template; `${VAR}` is read from the environment. */
  headers: Record<string, string>;
}

export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

export const MCP_SERVER_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]{0,31}$/;
export const DEFAULT_MCP_TIMEOUT_SECONDS = 60;
export const DEFAULT_MCP_CONNECT_TIMEOUT_SECONDS = 20;
export const DEFAULT_MCP_OUTPUT_LIMIT = 8000;

const nullAsAbsent = (value: unknown) => (value === null ? undefined : value);
const globList = z.array(z.string().regex(/^[A-Za-z0-9_.*?/-]+$/, { error: 'must be a tool name or glob (letters, digits, _ . - / and * ?)' }));

/**
 * Only `env` and `headers` fill `${VAR}` from the bot's environment; `command`, `args`, `cwd` and
 * `url` reach the server as written, so a `${GH_TOKEN}` there would reach it as those characters,
 * not the token, and start-up would not say so. Refused instead; `$${` is a literal `${`, as in env
 * and headers.
 */
const UNEXPANDED_PLACEHOLDER = /\$(\$?)\{/g;

const literalText = (options: { instead: string }) =>
  z.string().transform((text, context) => {
    let unescaped = false;
    const value = text.replace(UNEXPANDED_PLACEHOLDER, (_match, escaped: string) => {
      if (escaped !== '$') unescaped = true;
      return '${';
    });
    if (unescaped) context.addIssue({ code: 'custom', message: `has \${…}, which is not expanded here; ${options.instead} (write $\${ for a literal \${)` });
    return value;
  });
const THROUGH_ENV = { instead: 'pass it through env: and have the server read it' };

const serverObjectSchema = z.strictObject({
  command: z.string().min(1, 'must not be empty').pipe(literalText(THROUGH_ENV)).optional(),
  args: z.preprocess(nullAsAbsent, z.array(literalText(THROUGH_ENV)).optional()),
  env: z.preprocess(
    nullAsAbsent,
    z
      .record(
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'is not a valid environment variable name' }),
        z.union([z.string(), z.number(), z.boolean()]).transform((value, context) => {
          const text = String(value);
          const problem = placeholderProblem(text);
          if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
          return text;
        }),
      )
      .optional(),
  ),
  cwd: z.string().min(1, 'must not be empty').pipe(literalText(THROUGH_ENV)).optional(),
  url: literalText({ instead: 'put the secret in headers:, where ${VAR} is filled' }).optional(),
  headers: z.preprocess(nullAsAbsent, headerTemplatesSchema.optional()),
  timeoutSeconds: z.number().positive().max(3600).default(DEFAULT_MCP_TIMEOUT_SECONDS),
  connectTimeoutSeconds: z.number().positive().max(600).default(DEFAULT_MCP_CONNECT_TIMEOUT_SECONDS),
  outputLimit: z.int().min(100).max(1_000_000).default(DEFAULT_MCP_OUTPUT_LIMIT),
  trustReadOnlyHint: z.boolean().default(false),
  include: z.preprocess(nullAsAbsent, globList.min(1, 'must list at least one tool; leave it out to offer all').optional()),
  exclude: z.preprocess(nullAsAbsent, globList.default([])),
});

const serverSchema = serverObjectSchema.transform((server, context): McpServerConfig => {
  const common = {
    timeoutSeconds: server.timeoutSeconds,
    connectTimeoutSeconds: server.connectTimeoutSeconds,
    outputLimit: server.outputLimit,
    trustReadOnlyHint: server.trustReadOnlyHint,
    ...(server.include === undefined ? {} : { include: server.include }),
    exclude: server.exclude,
  };
  if (server.command !== undefined && server.url !== undefined) {
    context.addIssue({ code: 'custom', path: ['url'], message: 'give either command (stdio) or url (Streamable HTTP), not both' });
    return z.NEVER;
  }
  if (server.command !== undefined) {
    if (server.headers !== undefined) context.addIssue({ code: 'custom', path: ['headers'], message: 'only applies to url servers; stdio servers take env' });
    return {
      transport: 'stdio',
      command: server.command,
      args: server.args ?? [],
      env: server.env ?? {},
      ...(server.cwd === undefined ? {} : { cwd: server.cwd }),
      ...common,
    };
  }
  if (server.url !== undefined) {
    for (const key of ['args', 'env', 'cwd'] as const) {
      if (server[key] !== undefined) context.addIssue({ code: 'custom', path: [key], message: 'only applies to command (stdio) servers' });
    }
    let url: URL | undefined;
    try {
      url = new URL(server.url);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      context.addIssue({ code: 'custom', path: ['url'], message: 'must be an absolute http:// or https:// URL' });
      return z.NEVER;
    }
    const credentials = urlCredentialsProblem(url);
    if (credentials !== undefined) {
      context.addIssue({ code: 'custom', path: ['url'], message: credentials });
      return z.NEVER;
    }
    return { transport: 'http', url: url.href, headers: server.headers ?? {}, ...common };
  }
  context.addIssue({ code: 'custom', path: ['command'], message: 'is required (or url, for a Streamable HTTP server)' });
  return z.NEVER;
});

export const mcpServersSchema = z.record(
  z.string().regex(MCP_SERVER_NAME_PATTERN, {
    error: 'is not a valid server name (letters, digits, _ and -, starting with a letter, at most 32; no dots, they separate server and tool)',
  }),
  serverSchema,
);

/** Keys of a server entry, for "did you mean" hints. */
export const MCP_CONFIG_KEYS = Object.keys(serverObjectSchema.shape);
