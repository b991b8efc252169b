/**
 * What is said of a server's tool list (notices, warnings, refusals, logs): an `include` or `exclude`
 * entry it does not bear out, or a list that could not be read.
 */
export function createMcpListMessages(name: string) {
  return { withheldMessage, excludeGlobMessage, includeMessage, staleMessage };

  function withheldMessage(unmatched: readonly string[]): string {
    return (
      `MCP server ${name}: its exclude lists ${globsMatchingNone(unmatched)} of the tools it lists, so none of its tools are offered ` +
      `(a misspelled exclude would offer the tool it was meant to hide). Correct mcpServers.${name}.exclude.`
    );
  }

  function excludeGlobMessage(unmatched: readonly string[]): string {
    return (
      `MCP server ${name}: its exclude lists ${globsMatchingNone(unmatched)} of the tools it lists; its tools are offered, ` +
      `and a tool it lists later that ${unmatched.length === 1 ? 'the glob matches' : 'the globs match'} is hidden. If it is a typo, correct mcpServers.${name}.exclude.`
    );
  }

  function includeMessage(unmatched: readonly string[]): string {
    return `MCP server ${name}: its include lists ${globsMatchingNone(unmatched)} of the tools it lists; the tools the rest of the list matches are offered. Correct mcpServers.${name}.include.`;
  }

  function staleMessage(reason: string): string {
    return `MCP server ${name} changed its tools and its new tool list could not be read (${reason})`;
  }
}

/** `a, b`: "a, which matches none" or "a, b, which match none" (the config's globs, not the server's text). */
function globsMatchingNone(globs: readonly string[]): string {
  return `${globs.join(', ')}, which ${globs.length === 1 ? 'matches' : 'match'} none`;
}
