import { compileToolPattern, type ToolPattern } from '../../approvals/policy/tool-pattern.js';

/** The `include` and `exclude` entries that match none of the tools a server lists. */
export interface ToolFilterMismatch {
  /** The entries as the config writes them. */
  include: string[];
  /** Plain names (no `*` or `?`): most likely a typo of the tool meant to be hidden. */
  exclude: string[];
  /** Globs, often written on purpose for tools the server may list later (`delete_*`). */
  excludeGlobs: string[];
}

export interface McpToolFilter {
  /** Whether `include` and `exclude` let a tool of this (server-side) name be offered. */
  offers(toolName: string): boolean;
  /**
   * The entries that match none of `listed` (every name the server listed, before any is filtered).
   * An unmatched `exclude` name is most likely a typo, so the tool it was meant to hide may be offered
   * under its real name; an unmatched `exclude` glob may be future-proofing; an `include` one only hides a tool.
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
  const unmatchedOf = (patterns: readonly ToolPattern[], listed: readonly string[]) => patterns.filter((pattern) => !listed.some((name) => pattern.matches(name)));
  const sources = (patterns: readonly ToolPattern[]) => patterns.map((pattern) => pattern.source);
  return {
    offers: (toolName) => (included === undefined || included.some((pattern) => pattern.matches(toolName))) && !excluded.some((pattern) => pattern.matches(toolName)),
    unmatched: (listed) => {
      const unmatchedExclude = unmatchedOf(excluded, listed);
      return {
        include: sources(unmatchedOf(included ?? [], listed)),
        exclude: sources(unmatchedExclude.filter((pattern) => pattern.exact)),
        excludeGlobs: sources(unmatchedExclude.filter((pattern) => !pattern.exact)),
      };
    },
  };
}
