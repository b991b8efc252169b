import type { OfferedTool } from './demo-prompt.js';
import type { ActionIntent } from './demo-request.js';

/** A call the demo model proposes. */
export interface DemoToolCall {
  toolName: string;
  input: Record<string, unknown>;
}

export const ASK_USER_TOOL_NAME = 'ask_user';

/** What the sandbox example's tools are called; with another config, a tool named alike is used. */
const PREFERRED_TOOLS: Record<ActionIntent['kind'], { names: string[]; prefix: RegExp }> = {
  status: { names: ['get_pods', 'list_pods'], prefix: /(^|_)pods$|^status/ },
  restart: { names: ['restart_service'], prefix: /^restart_/ },
  scale: { names: ['scale_deployment'], prefix: /^scale_/ },
  deploy: { names: ['deploy_version'], prefix: /^deploy_/ },
};

/** When the request does not say: the sandbox's example cluster has these. */
export const DEMO_DEFAULTS = { service: 'worker', deployment: 'api', replicas: 2, version: '1.5.0', namespace: 'staging' } as const;

// Other configs name the deployment differently; the first alias a tool's schema has gets the name.
const NAME_PROPERTIES = ['service', 'deployment', 'name', 'app'];

/** The offered tool for an intent, or undefined when this configuration has none. */
export function toolFor(intent: ActionIntent, tools: ReadonlyMap<string, OfferedTool>): OfferedTool | undefined {
  const preferred = PREFERRED_TOOLS[intent.kind];
  for (const name of preferred.names) {
    const tool = tools.get(name);
    if (tool) return tool;
  }
  return [...tools.values()].find((tool) => preferred.prefix.test(tool.name));
}

/** The name of the tool the sandbox example would use, for saying what is missing. */
export function preferredToolName(intent: ActionIntent): string {
  return PREFERRED_TOOLS[intent.kind].names[0] ?? intent.kind;
}

/**
 * The intent as input for `tool`, filled with defaults, and only with the properties the tool's
 * schema has (tools refuse unknown keys), so the demo also works with a config of one's own.
 */
export function callFor(intent: ActionIntent, tool: OfferedTool): DemoToolCall {
  const target = 'service' in intent ? intent.service : 'deployment' in intent ? intent.deployment : undefined;
  const values: Record<string, unknown> = {
    namespace: intent.namespace ?? DEMO_DEFAULTS.namespace,
    ...(intent.region === undefined ? {} : { region: intent.region }),
  };
  if (intent.kind !== 'status') {
    const name = target ?? (intent.kind === 'scale' || intent.kind === 'deploy' ? DEMO_DEFAULTS.deployment : DEMO_DEFAULTS.service);
    for (const property of NAME_PROPERTIES) values[property] = name;
  }
  if (intent.kind === 'scale') values.replicas = intent.replicas ?? DEMO_DEFAULTS.replicas;
  if (intent.kind === 'deploy') values.version = intent.version ?? DEMO_DEFAULTS.version;

  const declared = Object.keys(tool.properties);
  if (declared.length === 0) return { toolName: tool.name, input: {} };
  const input: Record<string, unknown> = {};
  const nameProperty = NAME_PROPERTIES.find((property) => declared.includes(property));
  for (const property of declared) {
    if (NAME_PROPERTIES.includes(property) && property !== nameProperty) continue;
    if (values[property] !== undefined) input[property] = values[property];
  }
  return { toolName: tool.name, input };
}

/** The ask_user call for "ask me which region/namespace": the choices the tools' schemas allow. */
export function questionCall({ about, purpose, tools }: { about: 'region' | 'namespace'; purpose: string; tools: ReadonlyMap<string, OfferedTool> }): DemoToolCall {
  const fallback = about === 'region' ? ['eu-west-1', 'us-east-1', 'ap-southeast-2'] : ['staging', 'prod'];
  const fromSchema = [...tools.values()].map((tool) => tool.properties[about]?.enum).find((values) => Array.isArray(values) && values.length >= 2);
  const options = (fromSchema ?? fallback).map(String).slice(0, 10);
  return { toolName: ASK_USER_TOOL_NAME, input: { question: `Which ${about} should I ${purpose} in?`, options } };
}
