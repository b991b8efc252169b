import { describe, expect, it } from 'vitest';
import { parseConfigFile } from './config-file.js';
import { checkToolNameLists, toolPatternsMatchingNoTool } from './tool-name-lists.js';

const TOOLS = `
tools:
  - name: restart_service
    description: Restart a service
    command: ["systemctl", "restart", "{service}"]
    parameters: { service: { type: string } }
  - name: list_pods
    description: List pods
    command: ["kubectl", "get", "pods"]
    approval: never
`;
const MCP = `
mcpServers:
  k8s: { url: "https://mcp.example.com/" }
`;
/** What the bot offers before any MCP server lists its tools: ask_user and the command tools. */
const OFFERED = ['ask_user', 'restart_service', 'list_pods'];

function problemsOf(yaml: string, toolNames: readonly string[] = OFFERED) {
  return checkToolNameLists({ config: parseConfigFile(yaml, 'countersign.yml'), toolNames });
}

function rules(...lines: string[]): string {
  return `policy:\n  rules:\n${lines.map((line) => `    - ${line}`).join('\n')}\n`;
}

/** Schedules, each given as its name and `autoApprove` list. */
function schedules(...entries: [name: string, autoApprove: string][]): string {
  return `schedules:\n${entries.map(([name, autoApprove]) => `  - { name: ${name}, cron: "0 * * * *", channel: C0OPS0001, prompt: hi, autoApprove: ${autoApprove} }`).join('\n')}\n`;
}

describe('checkToolNameLists', () => {
  it('refuses a rule naming a tool that does not exist, and suggests the close one', () => {
    expect(problemsOf(`${TOOLS}${rules('{ name: restarts, tools: [list_pods, restart_servce], approvers: [U0ALICE] }')}`)).toEqual([
      {
        field: 'policy.rules[0].tools[1]',
        message: 'names restart_servce, which is not a tool (did you mean restart_service?); rules[0] ("restarts") would never apply to it',
      },
    ]);
  });

  it('names no tool when none is close', () => {
    expect(problemsOf(`${TOOLS}${rules('{ tools: [deploy_everything] }')}`)).toEqual([
      { field: 'policy.rules[0].tools[0]', message: 'names deploy_everything, which is not a tool; rules[0] would never apply to it' },
    ]);
  });

  it('accepts every tool the bot offers, built-in ones and http_request included', () => {
    const http = 'http:\n  bases: [{ url: "https://api.example.com/" }]\n';
    expect(problemsOf(`${TOOLS}${http}${rules('{ tools: [ask_user, restart_service] }', '{ tools: [http_request], approval: never }')}`, [...OFFERED, 'http_request'])).toEqual([]);
  });

  it('refuses a glob that matches no tool while no MCP server is configured', () => {
    expect(problemsOf(`${TOOLS}${rules('{ tools: ["restart_*"] }', '{ tools: ["deploy_*"] }', '{ tools: ["k8s.*"] }')}`)).toEqual([
      { field: 'policy.rules[1].tools[0]', message: 'matches no tool; rules[1] would never apply to it' },
      { field: 'policy.rules[2].tools[0]', message: 'matches no tool; rules[2] would never apply to it' },
    ]);
  });

  it('leaves names and globs an MCP server could list to run time', () => {
    expect(problemsOf(`${TOOLS}${MCP}${rules('{ tools: [k8s.delete_pod, "k8s.get_*", "**.delete_*", "*.scale"] }')}`)).toEqual([]);
  });

  it('still refuses, with MCP servers configured, what no MCP tool could be called', () => {
    // MCP tools are named server.tool, and server names have no dots.
    expect(problemsOf(`${TOOLS}${MCP}${rules('{ tools: [restart_servce, k8z.delete_pod, "k8z.get_*", "deploy_*"] }')}`)).toEqual([
      { field: 'policy.rules[0].tools[0]', message: 'names restart_servce, which is not a tool (did you mean restart_service?); rules[0] would never apply to it' },
      { field: 'policy.rules[0].tools[1]', message: 'names k8z.delete_pod, which is not a tool: no MCP server is named k8z (did you mean k8s?); rules[0] would never apply to it' },
      { field: 'policy.rules[0].tools[2]', message: 'matches no tool: no MCP server is named k8z (did you mean k8s?); rules[0] would never apply to it' },
      { field: 'policy.rules[0].tools[3]', message: 'matches no tool, and no MCP tool (named server.tool) could match it; rules[0] would never apply to it' },
    ]);
  });

  it("refuses a schedule's autoApprove naming a tool that does not exist, as it refuses a rule's", () => {
    expect(problemsOf(`${TOOLS}${schedules(['heartbeat', '[list_pods, restart_servce]'], ['nightly', '["deploy_*"]'])}`)).toEqual([
      {
        field: 'schedules[0].autoApprove[1]',
        message: 'names restart_servce, which is not a tool (did you mean restart_service?); schedule heartbeat would never auto-approve it',
      },
      { field: 'schedules[1].autoApprove[0]', message: 'matches no tool; schedule nightly would never auto-approve it' },
    ]);
  });

  it("leaves a schedule's autoApprove an MCP server could list to run time, and refuses what none could", () => {
    expect(problemsOf(`${TOOLS}${MCP}${schedules(['heartbeat', '[list_pods, "k8s.get_*", k8z.get_pods]'])}`)).toEqual([
      { field: 'schedules[0].autoApprove[2]', message: 'names k8z.get_pods, which is not a tool: no MCP server is named k8z (did you mean k8s?); schedule heartbeat would never auto-approve it' },
    ]);
  });
});

describe('toolPatternsMatchingNoTool', () => {
  it('lists, once the MCP servers listed their tools, each rule pattern that matches none', () => {
    const config = parseConfigFile(`${TOOLS}${MCP}${rules('{ name: k8s reads, tools: ["k8s.get_*", k8s.delete_pod] }', '{ tools: [k8s.restart_deploymnet] }')}`, 'countersign.yml');
    expect(toolPatternsMatchingNoTool({ config, toolNames: [...OFFERED, 'k8s.get_pods', 'k8s.restart_deployment'] })).toEqual([
      { field: 'policy.rules[0].tools[1]', pattern: 'k8s.delete_pod', owner: 'rules[0] ("k8s reads")' },
      { field: 'policy.rules[1].tools[0]', pattern: 'k8s.restart_deploymnet', owner: 'rules[1]', suggestion: 'k8s.restart_deployment' },
    ]);
  });

  it("lists a schedule's autoApprove pattern that matches none of the tools listed", () => {
    const config = parseConfigFile(`${TOOLS}${MCP}${schedules(['heartbeat', '[list_pods, "k8s.get_*", k8s.get_pod]'])}`, 'countersign.yml');
    expect(toolPatternsMatchingNoTool({ config, toolNames: [...OFFERED, 'k8s.get_pods'] })).toEqual([
      { field: 'schedules[0].autoApprove[2]', pattern: 'k8s.get_pod', owner: 'schedule heartbeat', suggestion: 'k8s.get_pods' },
    ]);
  });
});
