import type { FlexibleSchema } from 'ai';

/**
 * Who and where a tool call runs for. Tools get it so they can log, scope side effects, or make
 * their work idempotent: `idempotencyKey` is stable across retries and replicas for one tool call.
 */
export interface ToolContext {
  requesterId: string;
  teamId: string;
  channel: string;
  threadTs: string;
  toolCallId: string;
  idempotencyKey: string;
  abortSignal?: AbortSignal;
  /**
   * Throws once this process no longer holds the thread (it stalled and another process took the
   * turn over), or, for a call let through on a grant, once that grant no longer holds. A tool that
   * waits before its effect (a command for its slot, an MCP call over HTTP for its tools/list) calls
   * it when the wait ends, so a call the new holder already counts as interrupted does not start after all.
   */
  assertHeld?: () => Promise<void>;
}

/**
 * `always` and `never` are the static rules; a function decides from the input, e.g. only `prod`
 * needs a countersignature. A tool without a rule needs approval: the gate fails closed.
 */
export type ApprovalRule<INPUT> =
  | 'always'
  | 'never'
  | ((input: INPUT, context: Omit<ToolContext, 'toolCallId' | 'idempotencyKey' | 'abortSignal' | 'assertHeld'>) => boolean | Promise<boolean>);

// biome-ignore lint/suspicious/noExplicitAny: a list of tools of different inputs must be assignable here (as the AI SDK's Tool<any>)
export interface ToolDefinition<INPUT = any, OUTPUT = unknown> {
  name: string;
  description: string;
  /** A zod schema, or a JSON Schema via `jsonSchema()` (MCP tools); the model sees it as JSON Schema. */
  inputSchema: FlexibleSchema<INPUT>;
  approval?: ApprovalRule<INPUT>;
  /**
   * What the tool does beyond its input schema, as its source knows it (a command tool's argv
   * template, an MCP tool's server): change it when the tool starts doing something else, and
   * approvals given for the old one do not run the new one. See `definitionFingerprintOf`.
   */
  definitionFingerprint?: string;
  /** Absent for tools a human answers (`ask_user`): the turn pauses until the answer arrives. */
  execute?: (input: INPUT, context: ToolContext) => Promise<OUTPUT>;
}

/** A tool the bot runs itself (every tool but the human-answered ones). */
// biome-ignore lint/suspicious/noExplicitAny: as for ToolDefinition
export type ExecutableToolDefinition<INPUT = any, OUTPUT = unknown> = ToolDefinition<INPUT, OUTPUT> & {
  execute: (input: INPUT, context: ToolContext) => Promise<OUTPUT>;
};

/** Identity helper that keeps the input type flowing from the schema into `execute` and `approval`. */
export function defineTool<INPUT, OUTPUT>(definition: ToolDefinition<INPUT, OUTPUT>): ToolDefinition<INPUT, OUTPUT> {
  return definition;
}
