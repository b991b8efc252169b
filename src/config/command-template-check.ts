import { ArgvTemplateError, parseTemplateElement } from '../tools/command/argv-template.js';

export interface TemplateProblem {
  path: (string | number)[];
  message: string;
}

/**
 * Cross-field checks zod's per-field schema cannot express: tool names are unique, and each
 * command template only refers to declared parameters in a way that always renders.
 *
 * It reads the raw, unvalidated document on purpose: zod skips refinements on objects that have
 * other errors, and an operator should see an unknown placeholder in the same run as a typo.
 */
export function checkCommandTemplates(raw: unknown): TemplateProblem[] {
  const tools = isRecord(raw) && Array.isArray(raw.tools) ? raw.tools : [];
  const problems: TemplateProblem[] = [];
  const firstIndexByName = new Map<string, number>();

  tools.forEach((tool: unknown, toolIndex) => {
    if (!isRecord(tool)) return;
    if (typeof tool.name === 'string') {
      const first = firstIndexByName.get(tool.name);
      if (first === undefined) firstIndexByName.set(tool.name, toolIndex);
      else problems.push({ path: ['tools', toolIndex, 'name'], message: `duplicates the name of tools[${first}]` });
    }
    if (!Array.isArray(tool.command)) return;
    const parameters = isRecord(tool.parameters) ? tool.parameters : {};
    tool.command.forEach((element: unknown, elementIndex) => {
      if (typeof element !== 'string') return;
      const path = ['tools', toolIndex, 'command', elementIndex];
      problems.push(...checkElement({ element, isExecutable: elementIndex === 0, parameters }).map((message) => ({ path, message })));
    });
  });
  return problems;
}

function checkElement({
  element,
  isExecutable,
  parameters,
}: {
  element: string;
  isExecutable: boolean;
  parameters: Record<string, unknown>;
}): string[] {
  let segments;
  try {
    segments = parseTemplateElement(element);
  } catch (error) {
    if (ArgvTemplateError.isInstance(error)) return [error.message];
    throw error;
  }
  const names = segments.flatMap((segment) => (segment.type === 'placeholder' ? [segment.name] : []));
  const messages: string[] = [];
  // The model choosing the executable would turn every tool into "run anything".
  if (isExecutable && names.length > 0) messages.push('the executable must be fixed text, not a {placeholder}');
  for (const name of names) {
    const parameter = Object.hasOwn(parameters, name) ? parameters[name] : undefined;
    if (parameter === undefined) {
      messages.push(`{${name}} is not a declared parameter`);
    } else if (segments.length > 1 && isRecord(parameter) && parameter.optional === true && parameter.default === undefined) {
      messages.push(`{${name}} is optional without a default, so it may only stand alone as a whole element`);
    }
  }
  return messages;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
