import type { ListToolsResult, MCPClient, McpToolAnnotations } from '@ai-sdk/mcp';
import { jsonSchema, type JSONSchema7 } from 'ai';
import type { McpServerConfig } from '../../config/mcp-config-schema.js';
import { wholeMilliseconds } from '../../config/duration.js';
import { fingerprintOf, fingerprintOfParts } from '../definition-fingerprint.js';
import type { Redactor } from '../http/redact.js';
import type { JsonSchemaValidator } from '../json-schema-validator.js';
import { ToolNotStartedError, type ToolNotStartedReason } from '../tool-not-started-error.js';
import { createMcpListMessages } from './mcp-list-messages.js';
import { errorMessage, isConnectionFailure } from './mcp-problems.js';
import { formatMcpResult } from './mcp-result.js';
import type { McpServerShared, McpToolDefinition, McpToolMetadata, OfferedTools } from './mcp-server-types.js';
import type { createRetiringClients } from './retiring-clients.js';

export interface McpToolDefinitionsOptions {
  name: string;
  config: McpServerConfig;
  validator: JsonSchemaValidator;
  redact: Redactor;
  /** Read when a definition runs: the connection its call goes over, and whether the tool is still offered as it was. */
  shared: Pick<McpServerShared, 'state' | 'client' | 'lastError' | 'staleList' | 'listPending' | 'mismatch' | 'definitions'>;
  retiring: Pick<ReturnType<typeof createRetiringClients<MCPClient>>, 'calling' | 'isBroken'>;
  /**
   * Over HTTP, what the server offers now, from a tools/list asked for the call (`createMcpToolList`'s `offeredNow`);
   * rejects with `signal`'s reason once it aborts (the list, perhaps shared with other calls, goes on for them).
   */
  offeredNow: (client: MCPClient, signal?: AbortSignal) => Promise<OfferedTools>;
  /** The connection in use broke during a call. */
  lost: (reason: string) => void;
}

/**
 * Turns a listed tool of one MCP server into an ordinary tool definition, whose `execute` calls the
 * server over the connection in use, and refuses (not run) when the server no longer offers it as it was
 * (over HTTP, as a tools/list asked for the call says).
 */
export function createMcpToolDefinitions({ name, config, validator, redact, shared, retiring, offeredNow, lost }: McpToolDefinitionsOptions) {
  const { withheldMessage, staleMessage } = createMcpListMessages(name);
  /** Each definition's `definitionFingerprintOf`, worked out when it is made: a call compares the one it holds with the one offered now. */
  const fingerprints = new WeakMap<McpToolDefinition, string>();

  return { toDefinition };

  function toDefinition(tool: ListToolsResult['tools'][number]): McpToolDefinition {
    const schema = { ...(tool.inputSchema as JSONSchema7), properties: (tool.inputSchema.properties ?? {}) as JSONSchema7['properties'], additionalProperties: false } as JSONSchema7;
    const annotations = tool.annotations as McpToolAnnotations | undefined;
    const title = tool.title ?? annotations?.title;
    const metadata: McpToolMetadata = { source: 'mcp', server: name, tool: tool.name, ...(title ? { title } : {}), ...(annotations ? { annotations } : {}) };
    const trusted = config.trustReadOnlyHint && annotations?.readOnlyHint === true && annotations.destructiveHint !== true;
    const toolName = `${name}.${tool.name}`;
    const declared = fingerprintOf({ kind: 'mcp', server: serverIdentity(name, config), tool: tool.name });
    const definition: McpToolDefinition = {
      name: toolName,
      description: tool.description?.trim() || title || tool.name,
      // The server's JSON Schema; the AI SDK does not validate it, so ajv does (for the model's
      // input here, and for an approver's edit in the form).
      inputSchema: jsonSchema<Record<string, unknown>>(schema, {
        validate: (value) => {
          const result = validator.validate(schema, value);
          return result.success
            ? { success: true, value: value as Record<string, unknown> }
            : { success: false, error: new Error(result.issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`).join('; ')) };
        },
      }),
      // The schema is part of every tool's fingerprint (definitionFingerprintOf); this names whom the call goes to.
      definitionFingerprint: declared,
      // No rule of its own: it needs approval unless a policy rule says otherwise, or the operator
      // chose to trust this server's readOnlyHint.
      ...(trusted ? { approval: 'never' as const } : {}),
      metadata,
      async execute(input, context) {
        const current = shared.client;
        // These refusals (and the input's check below) come after the turn wrote the call's start marker, and
        // nothing reached the server: a `ToolNotStartedError` has the turn record the call as not run, not as run and failed.
        if (shared.state !== 'connected' || !current) {
          throw new ToolNotStartedError({ toolName, reason: 'server-unavailable', message: unavailableMessage(toolName) });
        }
        // Under way on its connection from the tools/list read for it (over HTTP) to its answer: one retired
        // meanwhile (replaced for its event stream) is closed only after, not between the two.
        return retiring.calling(current, async () => {
          // A turn holds the definitions it was handed at its start: one the server no longer offers
          // (its tools withheld for the exclude, the tool gone from its list or redefined under its
          // name, or its latest list not read, so it may have changed) must not run, and a call the
          // policy, a grant or auto-approve let through without a card would (a grant is bound to the
          // held definition, and the input was checked against its schema).
          const unavailable = notOffered(definition, config.transport === 'http' ? await offeredForCall({ client: current, toolName, signal: context.abortSignal }) : shared);
          if (unavailable) throw new ToolNotStartedError({ toolName, reason: unavailable.reason, message: `${unavailable.text}; ${toolName} did not run.` });
          const checked = validator.validate(schema, input);
          if (!checked.success) {
            const message = `Invalid input for ${toolName}: ${checked.issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`).join('; ')}`;
            throw new ToolNotStartedError({ toolName, reason: 'invalid-input', message });
          }
          // Over HTTP the call waited for its list (up to connectTimeoutSeconds a page) after the turn's last
          // checks: a grant revoked or expired, or the thread lost, meanwhile must stop it before anything
          // reaches the server (`ToolContext.assertHeld`; the turn records its refusal as not run, as a command's after its slot).
          if (config.transport === 'http') await context.assertHeld?.();
          // The turn stopped meanwhile (it failed, or the bot is stopping): tools/call is not sent, so the call did not
          // run. callTool would refuse it too, but its error is recorded as a call that ran and failed.
          if (context.abortSignal?.aborted) throw new ToolNotStartedError({ toolName, reason: 'aborted', message: stoppedMessage(toolName) });
          // Its connection was taken as lost meanwhile (another call's list or call failed on it), or the server's
          // handle closed it: tools/call is not sent on it (callTool on a closed client refuses it before sending,
          // but that error is recorded as a call that ran and failed).
          if (retiring.isBroken(current) || shared.state === 'closed') {
            throw new ToolNotStartedError({ toolName, reason: 'server-unavailable', message: unavailableMessage(toolName) });
          }
          let result: unknown;
          try {
            result = await current.callTool({
              name: tool.name,
              arguments: input,
              options: { timeout: wholeMilliseconds(config.timeoutSeconds, 's'), ...(context.abortSignal ? { signal: context.abortSignal } : {}) },
            });
          } catch (error) {
            const message = redact(errorMessage(error));
            if (isConnectionFailure(error) && current === shared.client) lost(message);
            throw new Error(`${toolName} failed: ${message}`);
          }
          // Redacted inside, before the output limit cuts it (see formatMcpResult).
          const outcome = formatMcpResult(result, config.outputLimit, redact);
          if (outcome.isError) throw new Error(`${toolName} reported an error: ${outcome.output.text || 'no details'}`);
          return outcome.output;
        });
      },
    };
    // What `definitionFingerprintOf` gives for it: `schema` is the JSON Schema its inputSchema wraps as is.
    fingerprints.set(definition, fingerprintOfParts({ declared, inputSchema: schema }));
    return definition;
  }

  /**
   * Over HTTP, what the server offers as the call is about to run: a tools/list asked for it on the
   * connection it goes over. The cached list is refreshed only on a change heard, and a server may
   * change its tools unheard (a stateless one has no event stream; one lost is replaced only after a
   * while; one a NAT dropped says nothing), so an approval bound to the old definition would run the
   * new one. A list that cannot be read refuses the call (fail closed), as a stale list does.
   */
  async function offeredForCall({ client, toolName, signal }: { client: MCPClient; toolName: string; signal: AbortSignal | undefined }): Promise<OfferedTools> {
    try {
      return await offeredNow(client, signal);
    } catch (error) {
      // The turn stopped while the list was under way: the call gives up waiting for it (it could take
      // connectTimeoutSeconds a page, and the turn's failure waits for its calls), and tools/call was never sent.
      if (signal?.aborted) throw new ToolNotStartedError({ toolName, reason: 'aborted', message: stoppedMessage(toolName) });
      const reason = redact(errorMessage(error));
      const connectionFailed = isConnectionFailure(error);
      if (connectionFailed && client === shared.client) lost(`its tool list could not be read (${reason})`);
      const message = `MCP server ${name}'s tool list, read to check that ${toolName} is still the tool this call was made for, could not be read (${reason}); ${toolName} did not run.`;
      throw new ToolNotStartedError({ toolName, reason: connectionFailed ? 'server-unavailable' : 'list-stale', message });
    }
  }

  function unavailableMessage(toolName: string): string {
    return `MCP server ${name} is not available${shared.lastError ? ` (${shared.lastError})` : ''}; ${toolName} did not run. The bot reconnects in the background.`;
  }

  function stoppedMessage(toolName: string): string {
    return `The turn stopped before ${toolName} was sent to MCP server ${name}; ${toolName} did not run.`;
  }

  /**
   * Why the server does not offer the tool of the definition `held` now (or cannot say whether it
   * does: its latest list failed, or a change it said is not read yet), or offers it as something else,
   * if so: `offered` is its cached list, or over HTTP the one read for this call. A definition listed
   * again with only its description changed does the same: it runs, as an approval bound to it would.
   */
  function notOffered(held: McpToolDefinition, offered: OfferedTools): { reason: ToolNotStartedReason; text: string } | undefined {
    if (shared.staleList !== undefined) return { reason: 'list-stale', text: staleMessage(shared.staleList) };
    if (shared.listPending) return { reason: 'list-stale', text: `MCP server ${name} said its tools changed and its new tool list is not read yet` };
    if (offered.mismatch.exclude.length > 0) return { reason: 'withheld', text: `MCP server ${name}'s tools are withheld: ${withheldMessage(offered.mismatch.exclude)}` };
    const now = offered.definitions.find((definition) => definition.metadata.tool === held.metadata.tool);
    if (!now) return { reason: 'not-offered', text: `MCP server ${name} no longer offers ${held.name}` };
    if (now !== held && fingerprints.get(now) !== fingerprints.get(held)) {
      return { reason: 'not-offered', text: `MCP server ${name} changed ${held.name} since this turn began (its input schema is not the one this call was made for)` };
    }
    // Annotations are not part of the fingerprint (grants and approvals bound to it stay valid when only
    // they change), but with trustReadOnlyHint they decide whether a call needs approval: a held
    // definition let through without a card must not run once the server no longer says it is read-only
    // (destructive now). The other way round is harmless: that call was approved on a card.
    if (held.approval === 'never' && now.approval !== 'never') {
      return { reason: 'not-offered', text: `MCP server ${name} no longer declares ${held.name} read-only (it needs approval now, and this call had none)` };
    }
    return undefined;
  }
}

/**
 * Which server a call reaches and how, as the config writes it: the env and header templates with
 * their `${VAR}` placeholders unresolved (as http_request's header templates), so a deploy that
 * turns `KUBE_CONTEXT: staging` into `prod` is another tool, while a rotated secret read into a
 * placeholder is not, and no secret value goes into the hash.
 */
function serverIdentity(name: string, config: McpServerConfig): unknown {
  if (config.transport === 'http') return { name, transport: 'http', url: config.url, headers: config.headers };
  return { name, transport: 'stdio', command: config.command, args: config.args, cwd: config.cwd ?? null, env: config.env };
}
