/**
 * Tool-name globs for policy rules. MCP tools are named `server.tool`, so `*` stops at a `.`:
 * `k8s.*` covers the k8s server's tools but `*` alone does not silently cover every MCP server.
 * `**` crosses dots (`**` is everything), `?` is one character other than a dot.
 */
export interface ToolPattern {
  source: string;
  /** Characters a name must contain literally; more means more specific. */
  literalCharacters: number;
  /** No wildcards at all: names exactly one tool. */
  exact: boolean;
  matches(toolName: string): boolean;
}

export function compileToolPattern(pattern: string): ToolPattern {
  let expression = '';
  let literalCharacters = 0;
  for (let index = 0; index < pattern.length; index += 1) {
    const character = pattern[index] ?? '';
    if (character === '*' && pattern[index + 1] === '*') {
      expression += '.*';
      index += 1;
    } else if (character === '*') {
      expression += '[^.]*';
    } else if (character === '?') {
      expression += '[^.]';
    } else {
      expression += character.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
      literalCharacters += 1;
    }
  }
  const regularExpression = new RegExp(`^${expression}$`);
  return {
    source: pattern,
    literalCharacters,
    exact: literalCharacters === pattern.length,
    matches: (toolName) => regularExpression.test(toolName),
  };
}
