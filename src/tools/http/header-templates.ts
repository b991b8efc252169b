import type { ConfigProblem } from '../../config/config-error.js';
import { expandPlaceholders } from '../../config/env-placeholders.js';

export interface ResolvedValues {
  values: Record<string, string>;
  /** Every value that came from the environment, and every whole value that contains one. */
  secrets: string[];
}

/**
 * Fills `${VAR}` placeholders from `env` when a tool source is built. A missing variable is a
 * configuration problem (named by `field`, never by value), collected so all are reported at once.
 */
export function resolveTemplates(
  templates: Record<string, string>,
  env: Record<string, string | undefined>,
  field: string,
  problems: ConfigProblem[],
): ResolvedValues {
  const values: Record<string, string> = {};
  const secrets: string[] = [];
  for (const [name, template] of Object.entries(templates)) {
    const missing: string[] = [];
    const expanded = expandPlaceholders(template, env, missing);
    for (const variable of missing) problems.push({ field: `${field}.${name}`, message: `environment variable ${variable} is not set` });
    values[name] = expanded.value;
    if (expanded.secrets.length > 0) secrets.push(expanded.value, ...expanded.secrets);
  }
  return { values, secrets };
}
