import type { PolicyConfig } from '../config/policy-config-schema.js';
import { inputWithDefaults } from '../tools/input-with-defaults.js';
import type { ToolContext, ToolDefinition } from '../tools/tool-definition.js';
import { evaluatePolicy, type PolicyEvaluation, type ToolApproval } from './policy/evaluate-policy.js';
import type { CurrentEvaluation } from './policy/governing-policy.js';

export type CallContext = Omit<ToolContext, 'toolCallId' | 'idempotencyKey' | 'abortSignal'>;

/**
 * The one place a proposed call meets the approval rules: the tool's own rule (a function runs
 * here) and then the operator's policy, which outranks it. Used by the AI SDK's `toolApproval` gate
 * when the model proposes a call and again when the card is built, so both see the same answer.
 * Both rules judge the input with the tool schema's defaults filled in (`inputWithDefaults`): a
 * field left out is the default the tool will act on, not a field a laxer rule may ignore.
 */
export async function evaluateCallPolicy(options: {
  policy: PolicyConfig;
  definition: ToolDefinition | undefined;
  toolName: string;
  input: unknown;
  context: CallContext;
}): Promise<PolicyEvaluation> {
  const input = await inputWithDefaults(options.definition, options.input);
  const toolApproval = await resolveToolRule(options.definition, input, options.context);
  return evaluatePolicy({ policy: options.policy, toolName: options.toolName, channel: options.context.channel, input, toolApproval });
}

async function resolveToolRule(definition: ToolDefinition | undefined, input: unknown, context: CallContext): Promise<ToolApproval | undefined> {
  const rule = definition?.approval;
  if (rule === undefined || rule === 'always' || rule === 'never') return rule;
  try {
    return (await rule(input, context)) ? 'always' : 'never';
  } catch {
    // A rule that throws cannot vouch for the call: fail closed.
    return 'always';
  }
}

/**
 * What the config this process runs with says of an approved input, for the checks that hold a
 * waiting or approved call to the policy in force as well as to the one its card showed (the
 * resume, Try again).
 */
export function createCurrentEvaluation({ policy, tools }: { policy: PolicyConfig; tools: readonly ToolDefinition[] }): CurrentEvaluation {
  return ({ step, call, input }) =>
    evaluateCallPolicy({
      policy,
      definition: tools.find((tool) => tool.name === call.toolName),
      toolName: call.toolName,
      input,
      context: { requesterId: step.requesterId, teamId: step.teamId, channel: step.channel, threadTs: step.threadTs },
    });
}
