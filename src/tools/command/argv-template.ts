import { CountersignError, ErrorCode } from '../../errors/countersign-error.js';
/**
 * Argv templates: `["kubectl", "scale", "deployment/{service}", "--replicas={replicas}"]`.
 *
 * Substitution happens per element and the result goes straight to `spawn` without a shell, so a
 * value can never become a second argument, a pipe or a command substitution: `x; rm -rf /` is
 * one literal argument. That is the whole security argument for command tools; keep it that way.
 */

export type ArgvValue = string | number | boolean | undefined;

export type TemplateSegment = { type: 'literal'; text: string } | { type: 'placeholder'; name: string };

const MARKER = Symbol.for('countersign.error.ArgvTemplateError');

export class ArgvTemplateError extends CountersignError {
  override readonly name = 'ArgvTemplateError';
  readonly code = ErrorCode.ArgvTemplateInvalid;
  /** The template element at fault, as written. */
  readonly element: string;
  readonly placeholder: string | undefined;
  private readonly [MARKER] = true;

  constructor({ message, element, placeholder }: { message: string; element: string; placeholder?: string }) {
    super(message);
    this.element = element;
    this.placeholder = placeholder;
  }

  static override isInstance(error: unknown): error is ArgvTemplateError {
    return typeof error === 'object' && error !== null && MARKER in error;
  }
}

const PLACEHOLDER_NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/**
 * Splits one template element into literal text and `{name}` placeholders; `{{` and `}}` are
 * literal braces. A stray brace is an error rather than literal text, so a forgotten escape in
 * e.g. kubectl's `-o jsonpath={.items[*]}` is caught when the config loads, not at run time.
 */
export function parseTemplateElement(element: string): TemplateSegment[] {
  const segments: TemplateSegment[] = [];
  let literal = '';
  let index = 0;
  while (index < element.length) {
    const character = element[index];
    const next = element[index + 1];
    if ((character === '{' && next === '{') || (character === '}' && next === '}')) {
      literal += character;
      index += 2;
    } else if (character === '}') {
      throw new ArgvTemplateError({ message: `unmatched "}" at position ${index}; write "}}" for a literal brace`, element });
    } else if (character === '{') {
      const name = PLACEHOLDER_NAME.exec(element.slice(index + 1))?.[0];
      if (name === undefined || element[index + 1 + name.length] !== '}') {
        throw new ArgvTemplateError({
          message: `"{" at position ${index} does not start a {name} placeholder; write "{{" for a literal brace`,
          element,
        });
      }
      if (literal !== '') segments.push({ type: 'literal', text: literal });
      literal = '';
      segments.push({ type: 'placeholder', name });
      index += name.length + 2;
    } else {
      literal += character;
      index += 1;
    }
  }
  if (literal !== '') segments.push({ type: 'literal', text: literal });
  return segments;
}

/** The placeholder names an element refers to, in order of appearance. */
export function templatePlaceholders(element: string): string[] {
  return parseTemplateElement(element).flatMap((segment) => (segment.type === 'placeholder' ? [segment.name] : []));
}

/**
 * The placeholders whose value may be the first characters of the rendered element: the leading
 * one and any that only placeholders precede (`{prefix}{count}` with an empty prefix starts with
 * the count). A value there that begins with `-` reads as an option of the command.
 */
export function placeholdersStartingElement(element: string): string[] {
  const names: string[] = [];
  for (const segment of parseTemplateElement(element)) {
    if (segment.type === 'literal') break;
    names.push(segment.name);
  }
  return names;
}

/**
 * Renders a template into argv. Each element yields exactly one argument, except an element that
 * is only `{name}` whose value is undefined: it is dropped, so optional flags-as-values vanish
 * cleanly. A partial element (`--replicas={replicas}`) with an undefined value throws, because
 * `--replicas=` would be a different command than anyone approved.
 */
export function renderArgv(template: string[], values: Record<string, ArgvValue>): string[] {
  const argv: string[] = [];
  for (const element of template) {
    const segments = parseTemplateElement(element);
    const only = segments.length === 1 ? segments[0] : undefined;
    if (only?.type === 'placeholder' && lookup(values, only.name) === undefined) continue;
    let rendered = '';
    for (const segment of segments) {
      if (segment.type === 'literal') {
        rendered += segment.text;
        continue;
      }
      const value = lookup(values, segment.name);
      if (value === undefined) {
        throw new ArgvTemplateError({ message: `no value for {${segment.name}}`, element, placeholder: segment.name });
      }
      rendered += String(value);
    }
    argv.push(rendered);
  }
  return argv;
}

// Own properties only: `{constructor}` must not render `Object`'s constructor.
function lookup(values: Record<string, ArgvValue>, name: string): ArgvValue {
  return Object.hasOwn(values, name) ? values[name] : undefined;
}
