import { compileToolPattern, type ToolPattern } from '../../approvals/policy/tool-pattern.js';

/** An `include` or `exclude` glob that matches none of the tools a server lists. */
export interface ToolFilterMismatch {
  /** The globs as the config writes them. */
  include: string[];
  exclude: string[];
}

export interface McpToolFilter {
  /** Whether `include` and `exclude` let a tool of this (server-side) name be offered. */
  offers(toolName: string): boolean;
  /**
   * The globs that match none of `listed` (every name the server listed, before any is filtered):
   * most likely typos. An `exclude` one means the tool it was meant to hide may be offered under its
   * real name; an `include` one only hides a tool.
   */
  unmatched(listed: readonly string[]): ToolFilterMismatch;
}

/**
 * A server's `include` and `exclude` lists (globs of its own tool names, `*` and `?` as in policy
 * rules). They can only be checked against the tools once the server lists them, so the check is
 * here, at every list, rather than at config load.
 */
export function createMcpToolFilter({ include, exclude }: { include?: readonly string[]; exclude: readonly string[] }): McpToolFilter {
  const included = include?.map(compileToolPattern);
  const excluded = exclude.map(compileToolPattern);
  const unmatchedOf = (patterns: readonly ToolPattern[], listed: readonly string[]) =>
    patterns.filter((pattern) => !listed.some((name) => pattern.matches(name))).map((pattern) => pattern.source);
  return {
    offers: (toolName) => (included === undefined || included.some((pattern) => pattern.matches(toolName))) && !excluded.some((pattern) => pattern.matches(toolName)),
    unmatched: (listed) => ({ include: unmatchedOf(included ?? [], listed), exclude: unmatchedOf(excluded, listed) }),
  };
}
