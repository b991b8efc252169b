import { readFile } from 'node:fs/promises';
import { normalize } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { closestName } from './closest-name.js';
import { ConfigError, type ConfigProblem } from './config-error.js';
import { checkCommandTemplates } from './command-template-check.js';
import { checkConditionFields } from './condition-field-check.js';
import { checkConditionValues } from './condition-value-check.js';
import { countersignConfigSchema, KNOWN_CONFIG_KEYS, type CountersignConfig } from './config-schema.js';

export type {
  AgentConfig,
  BooleanParameterConfig,
  CommandApproval,
  CommandToolConfig,
  CountersignConfig,
  HistoryConfig,
  HttpBaseConfig,
  HttpConfig,
  McpHttpServerConfig,
  McpServerConfig,
  McpStdioServerConfig,
  NumberParameterConfig,
  ParameterConfig,
  PolicyConfig,
  StringParameterConfig,
} from './config-schema.js';

/** The built-in configuration: default instructions and history limits, no command tools. */
export function defaultConfig(): CountersignConfig {
  return parseConfigFile('', 'defaults');
}

/**
 * Loads the YAML config file, or the built-in defaults when `path` is undefined. Throws a
 * `ConfigError` listing every problem, each named by file and field path.
 */
export async function loadConfigFile(path: string | undefined): Promise<CountersignConfig> {
  if (path === undefined) return defaultConfig();
  const sourceName = normalize(path);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : `cannot be read (${(error as Error).message})`;
    throw new ConfigError({ problems: [{ field: sourceName, message: reason }], cause: error });
  }
  return parseConfigFile(text, sourceName);
}

/** Parses and validates config text; `sourceName` prefixes every field path in problems. */
export function parseConfigFile(yamlText: string, sourceName: string): CountersignConfig {
  const lineCounter = new LineCounter();
  const document = parseDocument(yamlText, { lineCounter, prettyErrors: false });
  if (document.errors.length > 0) {
    throw new ConfigError({
      problems: document.errors.map((error) => {
        // `file:line:column`, the form editors and terminals make clickable.
        const { line, col } = lineCounter.linePos(error.pos[0]);
        return { field: `${sourceName}:${line}:${col}`, message: `YAML syntax error: ${error.message.split('\n')[0]}` };
      }),
    });
  }
  const raw: unknown = document.toJS() ?? {};
  const result = countersignConfigSchema.safeParse(raw, { error: requiredMessage });
  const problems: ConfigProblem[] = [
    ...(result.success ? [] : result.error.issues.flatMap((issue) => issueToProblems(issue, sourceName))),
    ...checkCommandTemplates(raw).map((problem) => ({ field: fieldName(sourceName, problem.path), message: problem.message })),
  ];
  // Needs the parsed tools and rules, so it runs only once the rest of the file is valid.
  if (result.success) problems.push(...checkConditionFields(result.data).map((problem) => ({ field: fieldName(sourceName, problem.path), message: problem.message })));
  if (result.success) problems.push(...checkConditionValues(result.data).map((problem) => ({ field: fieldName(sourceName, problem.path), message: problem.message })));
  if (problems.length > 0 || !result.success) throw new ConfigError({ problems });
  // Typed as the documented interfaces, so the schema and the interfaces cannot drift apart.
  return result.data;
}

function requiredMessage(issue: z.core.$ZodRawIssue): string | undefined {
  return issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : undefined;
}

function issueToProblems(issue: z.core.$ZodIssue, sourceName: string): ConfigProblem[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ field: fieldName(sourceName, [...issue.path, key]), message: unknownKeyMessage(key) }));
  }
  // A union (`approval: always | never | { when: … }`) reports every branch's failure. When exactly
  // one branch got past the shape check, its nested problems are the ones the operator meant.
  if (issue.code === 'invalid_union') {
    const deeper = issue.errors.filter((branch) => branch.some((nested) => nested.path.length > 0 || nested.code === 'unrecognized_keys' || nested.code === 'custom'));
    const [branch] = deeper;
    if (deeper.length === 1 && branch !== undefined) {
      return branch.flatMap((nested) => issueToProblems({ ...nested, path: [...issue.path, ...nested.path] }, sourceName));
    }
  }
  // zod reports a bad record key as "Invalid key in record"; the nested issue says why.
  const message = issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message;
  return [{ field: fieldName(sourceName, issue.path), message }];
}

function unknownKeyMessage(key: string): string {
  const suggestion = closestName(key, KNOWN_CONFIG_KEYS);
  return suggestion === undefined ? 'is not a known setting' : `is not a known setting (did you mean ${suggestion}?)`;
}

/** `countersign.yml tools[1].parameters.namespace.enum` */
function fieldName(sourceName: string, path: readonly PropertyKey[]): string {
  let field = '';
  for (const segment of path) {
    if (typeof segment === 'number') field += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(String(segment))) field += field === '' ? String(segment) : `.${String(segment)}`;
    else field += `[${JSON.stringify(String(segment))}]`;
  }
  return field === '' ? sourceName : `${sourceName} ${field}`;
}
