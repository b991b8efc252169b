import { createHash } from 'node:crypto';
import { asSchema } from 'ai';
import { canonicalJson } from '../approvals/input-version.js';
import type { ToolDefinition } from './tool-definition.js';

/** A hash of a tool source's description of what a tool does (see `ToolDefinition.definitionFingerprint`). */
export function fingerprintOf(definition: unknown): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('base64url');
}

/**
 * What a tool does, as one hash: what its source declares (a command tool's argv template, an MCP
 * tool's server) and its input schema as the model sees it (parameters, their defaults and limits).
 * An approval records it, so a deploy that makes the tool do something else while the card waits
 * leaves the approval for the old definition unused. Configured secrets are never part of it:
 * sources declare `${VAR}` templates and variable names, never values.
 */
export function definitionFingerprintOf(definition: ToolDefinition): Promise<string> {
  let fingerprint = computed.get(definition);
  if (fingerprint === undefined) {
    fingerprint = computeFingerprint(definition);
    computed.set(definition, fingerprint);
  }
  return fingerprint;
}

/** A loaded definition does not change (a deploy or an MCP reconnect makes new ones): worked out once each, since the grant gate asks per call. */
const computed = new WeakMap<ToolDefinition, Promise<string>>();

async function computeFingerprint(definition: ToolDefinition): Promise<string> {
  const inputSchema = await asSchema(definition.inputSchema).jsonSchema;
  return fingerprintOfParts({ declared: definition.definitionFingerprint, inputSchema });
}

/**
 * `definitionFingerprintOf` from its parts, for a source that holds its tool's JSON Schema as the
 * model sees it (the one its `jsonSchema(...)` wraps): worked out at once, for a check that must not wait.
 */
export function fingerprintOfParts(parts: { declared: string | undefined; inputSchema: unknown }): string {
  return fingerprintOf({ declared: parts.declared ?? null, inputSchema: parts.inputSchema });
}
