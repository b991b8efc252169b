/**
 * `${NAME}` placeholders in config values that hold secrets (HTTP headers, MCP server environments
 * and headers). The config file names the variable; the value is read from the bot's environment
 * only when the tool is built, so a token is never written in the YAML, shown on a card, sent to
 * the model or logged. Write `$${` for a literal `${`.
 */

const PLACEHOLDER = /\$(\$?)\{([^}]*)\}/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INVALID_PLACEHOLDER = 'has a ${…} whose text is not a valid environment variable name (letters, digits and _, not starting with a digit; $${ for a literal ${)';

/** Names referred to by `text`, in order; throws on a malformed placeholder such as `${}` or `${A-B}`. */
export function placeholderNames(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(PLACEHOLDER)) {
    if (match[1] === '$') continue;
    const name = match[2] ?? '';
    // The text between the braces is not echoed: it is where an operator pastes a token by mistake.
    if (!VARIABLE_NAME.test(name)) throw new Error(INVALID_PLACEHOLDER);
    names.push(name);
  }
  return names;
}

/** The problem with a template, for config validation; undefined when it is well formed. */
export function placeholderProblem(text: string): string | undefined {
  try {
    placeholderNames(text);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export interface ExpandedValue {
  value: string;
  /** The substituted variable values: secrets to redact from anything shown. */
  secrets: string[];
}

/**
 * Replaces every placeholder with its variable; `missing` collects names that are not set (or
 * empty), and the caller decides whether that is fatal.
 */
export function expandPlaceholders(text: string, env: Record<string, string | undefined>, missing: string[] = []): ExpandedValue {
  const secrets: string[] = [];
  const value = text.replace(PLACEHOLDER, (_whole, escaped: string, name: string) => {
    if (escaped === '$') return `\${${name}}`;
    const variable = env[name];
    if (variable === undefined || variable === '') {
      missing.push(name);
      return '';
    }
    secrets.push(variable);
    return variable;
  });
  return { value, secrets };
}
