import type { JSONSchema7 } from 'ai';
import { z } from 'zod';
import type { ToolDefinition } from './tool-definition.js';

export const ASK_USER_TOOL_NAME = 'ask_user';

const askUserInputSchema = z
  .object({
    question: z.string().min(1).max(2000).describe('The question for the person who made the request, in plain words.'),
    options: z
      .array(z.string().min(1).max(75))
      .min(2)
      .max(10)
      .optional()
      .describe('Choices shown as buttons; the answer is the chosen text. Use for a pick among a few options.'),
    // A loose object rather than a record: records become `propertyNames`, which OpenAI rejects.
    answerSchema: z
      .looseObject({})
      .optional()
      .describe('A JSON Schema (type "object") for a structured answer the person fills in a form. Omit both this and options for a free-text answer.'),
  })
  .refine((input) => !(input.options && input.answerSchema), { message: 'give either options or answerSchema, not both' });

export type AskUserInput = z.infer<typeof askUserInputSchema>;

/**
 * A tool the human executes: the model asks, the turn pauses, the person who made the request
 * answers with a button or a form, and the validated answer becomes the tool result.
 */
export const askUserTool: ToolDefinition<AskUserInput> = {
  name: ASK_USER_TOOL_NAME,
  description:
    'Ask the person who made the request a question and wait for the answer. Use it when you need a decision or details only they have; do not guess.',
  inputSchema: askUserInputSchema,
  approval: 'never',
};

/** Free text, when the model gave neither options nor a schema. */
const FREE_TEXT_SCHEMA: JSONSchema7 = {
  type: 'object',
  properties: { answer: { type: 'string', title: 'Answer', maxLength: 3000 } },
  required: ['answer'],
  additionalProperties: false,
};

/**
 * The schema the reply form is generated from. A model-written schema that is unusable gets free
 * text, and so does one the form cannot satisfy: the form offers only the listed `properties`, so
 * a `required` name missing from them (`properties: { reason }, required: ["answer"]`, a slip models
 * make) would refuse every submit and leave the question unanswerable; at any depth, since a nested
 * object is a group of inputs too.
 */
export function answerSchemaOf(input: AskUserInput, isUsable: (schema: JSONSchema7) => boolean): JSONSchema7 {
  const schema = input.answerSchema as JSONSchema7 | undefined;
  return schema && schema.type === 'object' && isUsable(schema) && requiresOnlyListed(schema) ? schema : FREE_TEXT_SCHEMA;
}

function requiresOnlyListed(schema: JSONSchema7): boolean {
  const listed = schema.properties ?? {};
  const required: readonly string[] = schema.required ?? [];
  return required.every((name) => Object.hasOwn(listed, name)) && Object.values(listed).every(nestedRequiresOnlyListed);
}

/**
 * A nested object is a group of inputs when it lists properties and takes no other keys by schema
 * (`additionalProperties: {…}`, `patternProperties`); otherwise it is typed as JSON, where any key
 * can be given. Its `anyOf`/`oneOf`/`allOf` branches are checked too (a nullable object is one).
 */
function nestedRequiresOnlyListed(definition: JSONSchema7 | boolean): boolean {
  if (typeof definition !== 'object') return true;
  const branches = [...(definition.anyOf ?? []), ...(definition.oneOf ?? []), ...(definition.allOf ?? [])];
  if (!branches.every(nestedRequiresOnlyListed)) return false;
  const isGroup =
    Object.keys(definition.properties ?? {}).length > 0 && typeof (definition.additionalProperties ?? false) === 'boolean' && definition.patternProperties === undefined;
  return !isGroup || requiresOnlyListed(definition);
}
