import { definitionFingerprintOf } from '../tools/definition-fingerprint.js';
import type { ToolDefinition } from '../tools/tool-definition.js';

/**
 * Whether the tool an approval was given for is no longer the tool that would run: a deploy changed
 * what it does (a command tool's argv template, a parameter's default, an MCP tool's server) while
 * its card waited, under the same name and input. The approver signed the old definition, so the
 * new one must not run on that signature. An approval recorded without a fingerprint (a step stored
 * before they were recorded) is judged as it was then: by tool name and input alone.
 */
export async function definitionChangedSince(options: { recorded: string | undefined; current: () => Promise<string> }): Promise<boolean> {
  return options.recorded !== undefined && options.recorded !== (await options.current());
}

/** The tool's fingerprint now, worked out once per turn and only if an approval asks for it. */
export function currentFingerprint(definition: ToolDefinition): () => Promise<string> {
  let fingerprint: Promise<string> | undefined;
  return () => (fingerprint ??= definitionFingerprintOf(definition));
}

/**
 * What the model (and the audit trail) is told for an approved call whose tool changed since the
 * approval. Nothing started, so it says "not run", never "failed".
 */
export function changedDefinitionText(toolName: string): string {
  return `Not run: \`${toolName}\` changed since this was approved (its definition was updated by a deploy); nothing was run. Ask again if it is still needed.`;
}
