import { placeholderNames } from '../config/env-placeholders.js';
import type { CountersignConfig } from '../config/config-schema.js';

/**
 * What the config file reads as secrets: every variable named by a `${VAR}` placeholder (HTTP base
 * headers, MCP server headers and env), whatever its name. The name alone cannot say it is secret
 * (`PAGERDUTY_API` does not end in `_TOKEN`), the placeholder does.
 */
export interface ConfigSecrets {
  /** Withheld from the environment every command tool and stdio MCP server inherits; a source that needs one passes it in its own `env`. */
  variables: readonly string[];
  /** Their values (those set): redacted from whatever any tool source reports, not only the source that uses them. */
  values: readonly string[];
}

export const NO_CONFIG_SECRETS: ConfigSecrets = { variables: [], values: [] };

export function configSecrets({ config, env }: { config: CountersignConfig; env: Record<string, string | undefined> }): ConfigSecrets {
  const variables = new Set(placeholderTemplates(config).flatMap(namesIn));
  const values = new Set<string>();
  for (const name of variables) {
    const value = env[name];
    if (value !== undefined && value !== '') values.add(value);
  }
  return { variables: [...variables], values: [...values] };
}

/** Every config value in which `${VAR}` is filled from the environment. */
function placeholderTemplates(config: CountersignConfig): string[] {
  const templates = (config.http?.bases ?? []).flatMap((base) => Object.values(base.headers));
  for (const server of Object.values(config.mcpServers ?? {})) {
    templates.push(...Object.values(server.transport === 'http' ? server.headers : server.env));
  }
  return templates;
}

/** A malformed placeholder is the config schema's to report; it names no variable here. */
function namesIn(template: string): string[] {
  try {
    return placeholderNames(template);
  } catch {
    return [];
  }
}
