import { ArgvTemplateError, parseTemplateElement, placeholdersStartingElement } from '../tools/command/argv-template.js';

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
    problems.push(...checkNegativeNumbers({ command: tool.command, parameters, toolIndex }));
  });
  return problems;
}

/**
 * A number that starts an argument may not be negative unless the parameter says so
 * (`parameterToZodSchema`). A `minimum` or `default` below 0 says the author expects negative
 * values there, which would then be refused one by one at run time: better said once, at load.
 */
function checkNegativeNumbers({
  command,
  parameters,
  toolIndex,
}: {
  command: unknown[];
  parameters: Record<string, unknown>;
  toolIndex: number;
}): TemplateProblem[] {
  const problems: TemplateProblem[] = [];
  const reported = new Set<string>();
  command.forEach((element, elementIndex) => {
    if (typeof element !== 'string') return;
    let names: string[];
    try {
      names = placeholdersStartingElement(element);
    } catch {
      return; // checkElement reports the broken element.
    }
    for (const name of names) {
      const parameter = Object.hasOwn(parameters, name) ? parameters[name] : undefined;
      if (!isRecord(parameter) || parameter.type !== 'number' || parameter.allowLeadingDash === true || reported.has(name)) continue;
      const field = ['minimum', 'default'].find((key) => typeof parameter[key] === 'number' && parameter[key] < 0);
      if (field === undefined) continue;
      reported.add(name);
      problems.push({
        path: ['tools', toolIndex, 'parameters', name, field],
        message: `lets {${name}} be negative, but it starts command[${elementIndex}], where "-" would make it an option; set allowLeadingDash: true if the command takes negative numbers there, or keep ${field} at 0 or above`,
      });
    }
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
