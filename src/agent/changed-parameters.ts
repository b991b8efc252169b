import { isDeepEqualData, jsonSchema, type Schema } from 'ai';
import type { AwaitingCall } from './unavailable-tools.js';

/**
 * Whether an approved input is still what the tool's current schema makes of what it was given
 * (`schemaInput`: the model's raw input, or an editor's form values). This is the AI SDK's own rule
 * for an approved call it resumes (`validateApprovedToolApprovals`): the schema must accept it and
 * its output must equal the approved input. A deploy that adds a parameter with a default, renames
 * or removes one, or tightens a limit breaks it: the call would no longer run what was approved.
 */
export async function fitsCurrentSchema(options: { schema: Schema<unknown>; schemaInput: unknown; approvedInput: unknown }): Promise<boolean> {
  const result = await validateWith(options.schema, options.schemaInput);
  return result.success && sameData(result.value, options.approvedInput);
}

/**
 * What the model (and the audit trail) is told for an approved call whose input no longer fits its
 * tool's schema. Nothing started, so it says "not run", never "failed" nor "invalid input" (which
 * the model would read as its own mistake and retry).
 */
export function changedParametersText(toolName: string): string {
  return `Not run: \`${toolName}\`'s parameters changed since this was approved; nothing was run. Ask again if it is still needed.`;
}

/**
 * The schema a resumed turn gives a tool whose approved calls (`awaiting`) the AI SDK is about to
 * run. The SDK validates each approved call's input again before running it, and fails one that no
 * longer fits (see `fitsCurrentSchema`) as the model's own invalid input, without calling the tool:
 * nothing reaches the audit trail. Here such a call passes with the input it was approved with and
 * is added to `changed`, so the tool answers it "not run" instead (see `createTurnTools`).
 * Each awaiting call is recognised once, at the SDK's check of approved calls, which comes before
 * any model request: a later call of the model's with the same arguments is validated as usual.
 */
export function resumeSchema(options: { schema: Schema<unknown>; awaiting: readonly AwaitingCall[]; changed: Set<string> }): Schema<unknown> {
  const { schema, changed } = options;
  const pending = [...options.awaiting];
  return jsonSchema(() => schema.jsonSchema, {
    validate: async (value) => {
      const result = await validateWith(schema, value);
      const index = pending.findIndex((call) => sameData(call.schemaInput, value));
      if (index === -1) return result;
      const [call] = pending.splice(index, 1);
      if (!call || (result.success && sameData(result.value, call.input))) return result;
      changed.add(call.toolCallId);
      return { success: true, value: structuredClone(call.input) };
    },
  });
}

type Validation = { success: true; value: unknown } | { success: false; error: Error };

async function validateWith(schema: Schema<unknown>, value: unknown): Promise<Validation> {
  try {
    return schema.validate ? await schema.validate(structuredClone(value)) : { success: true, value };
  } catch (error) {
    return { success: false, error: error instanceof Error ? error : new Error(String(error)) };
  }
}

/** Equal as the AI SDK compares them: as plain data (a clone), keys in any order. */
function sameData(left: unknown, right: unknown): boolean {
  try {
    return isDeepEqualData(structuredClone(left), structuredClone(right));
  } catch {
    return false;
  }
}
