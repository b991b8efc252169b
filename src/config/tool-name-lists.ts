import { compileToolPattern } from '../approvals/policy/tool-pattern.js';
import { closestName } from './closest-name.js';
import type { ConfigProblem } from './config-error.js';
import type { CountersignConfig } from './config-schema.js';

/**
 * A tool name or glob in the config that names no tool applies to nothing, silently: a misspelled
 * `restart_servce` in a policy rule leaves `restart_service` to a laxer rule or the default, maybe
 * without a card; in a schedule's `autoApprove`, it leaves every firing waiting on a card nobody
 * expected. Every list of tool names is checked (`eachPattern`). Which tools exist is known once the tools are built (`loadTools`: `ask_user`, the command tools,
 * `http_request`, the TypeScript tools), except MCP tools, which a server lists when it connects.
 * MCP tools are named `server.tool` (server names have no dots), so a pattern that could only match
 * another server's tools, or names without a dot, is refused too; one that could match a configured
 * server's tools waits for `policyPatternsMatchingNoTool` once they are listed.
 */
export function checkToolNameLists({ config, toolNames }: { config: CountersignConfig; toolNames: readonly string[] }): ConfigProblem[] {
  const servers = Object.keys(config.mcpServers ?? {});
  const problems: ConfigProblem[] = [];
  eachPattern(config, ({ pattern, field, owner, unused }) => {
    const compiled = compileToolPattern(pattern);
    if (toolNames.some((name) => compiled.matches(name))) return;
    const mcp = mcpServerOf({ pattern, servers });
    if (mcp.kind === 'configured') return;
    const what = compiled.exact ? `names ${pattern}, which is not a tool` : 'matches no tool';
    let why = '';
    if (mcp.kind === 'unknown') {
      const server = closestName(mcp.server, servers);
      why = `: no MCP server is named ${mcp.server}${server === undefined ? '' : ` (did you mean ${server}?)`}`;
    } else if (compiled.exact) {
      const suggestion = closestTool(pattern, toolNames);
      why = suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`;
    } else if (servers.length > 0) {
      why = ', and no MCP tool (named server.tool) could match it';
    }
    problems.push({ field, message: `${what}${why}; ${owner} would never ${unused} it` });
  });
  return problems;
}

/** A pattern an MCP server might have matched, that none of the tools listed at start-up matches. */
export interface UnmatchedPattern {
  field: string;
  pattern: string;
  /** Whose list it is in: `rules[2]`, with its name when it has one, or `schedule heartbeat`. */
  owner: string;
  /** The closest tool name, when one is close. */
  suggestion?: string;
}

/**
 * What `checkToolNameLists` left to run time, checked against the tools the MCP servers listed
 * at start-up: each pattern still matching none, to be logged (not refused: a server that has not
 * connected yet, or lists a tool later, may still bring it).
 */
export function toolPatternsMatchingNoTool({ config, toolNames }: { config: CountersignConfig; toolNames: readonly string[] }): UnmatchedPattern[] {
  const unmatched: UnmatchedPattern[] = [];
  eachPattern(config, ({ pattern, field, owner }) => {
    const compiled = compileToolPattern(pattern);
    if (toolNames.some((name) => compiled.matches(name))) return;
    const suggestion = compiled.exact ? closestTool(pattern, toolNames) : undefined;
    unmatched.push({ field, pattern, owner, ...(suggestion === undefined ? {} : { suggestion }) });
  });
  return unmatched;
}

/**
 * Every tool name or glob the config lists, where it is and what it would fail to do. A new list
 * of tool names in the config belongs here, or its typos go unseen. (`mcpServers.*.include` and
 * `exclude` are not: they name a server's own tools, before the `server.` prefix, known only once
 * it lists them; `tools/mcp/tool-filter.ts` checks them then.)
 */
function eachPattern(config: CountersignConfig, visit: (at: { pattern: string; field: string; owner: string; unused: string }) => void): void {
  config.policy.rules.forEach((rule, ruleIndex) => {
    const owner = `rules[${ruleIndex}]${rule.name === undefined ? '' : ` (${JSON.stringify(rule.name)})`}`;
    rule.tools.forEach((pattern, index) => {
      visit({ pattern, field: `policy.rules[${ruleIndex}].tools[${index}]`, owner, unused: 'apply to' });
    });
  });
  config.schedules.forEach((schedule, scheduleIndex) => {
    schedule.autoApprove.forEach((pattern, index) => {
      visit({ pattern, field: `schedules[${scheduleIndex}].autoApprove[${index}]`, owner: `schedule ${schedule.name}`, unused: 'auto-approve' });
    });
  });
}

function closestTool(name: string, toolNames: readonly string[]): string | undefined {
  return closestName(name, toolNames, Math.max(2, Math.floor(name.length / 6)));
}

/**
 * Whose MCP tools `pattern` could match. Every name it matches starts with its text up to the first
 * wildcard, so a dot there fixes the server; without one, only a pattern with a dot or a `**` can
 * match a dotted name at all.
 */
function mcpServerOf({ pattern, servers }: { pattern: string; servers: readonly string[] }): { kind: 'configured' | 'none' } | { kind: 'unknown'; server: string } {
  if (servers.length === 0) return { kind: 'none' };
  const literalStart = pattern.split(/[*?]/, 1)[0] ?? '';
  const dot = literalStart.indexOf('.');
  if (dot >= 0) {
    const server = literalStart.slice(0, dot);
    return servers.includes(server) ? { kind: 'configured' } : { kind: 'unknown', server };
  }
  return literalStart !== pattern && (pattern.includes('.') || pattern.includes('**')) ? { kind: 'configured' } : { kind: 'none' };
}
