import { describeIntent } from './describe-intent.js';
import { describeOutcome } from './demo-outcomes.js';
import type { DemoPrompt, OfferedTool, ToolOutcome } from './demo-prompt.js';
import { parseDemoRequest, type ActionIntent, type DemoIntent } from './demo-request.js';
import { ASK_USER_TOOL_NAME, callFor, preferredToolName, questionCall, toolFor, type DemoToolCall } from './demo-tool-calls.js';

/** What the demo model answers in one step: text, then the calls it proposes (possibly none). */
export interface DemoReply {
  text: string;
  toolCalls: DemoToolCall[];
}

export const DEMO_MODEL_NOTICE = '(demo model — set OPENAI_API_KEY for a real one)';

const EXAMPLES: Array<{ say: string; intent: ActionIntent }> = [
  { say: "what's running in staging", intent: { kind: 'status' } },
  { say: 'restart the worker in staging', intent: { kind: 'restart' } },
  { say: 'scale api to 5 in prod', intent: { kind: 'scale' } },
  { say: 'deploy api 1.5.0 to staging', intent: { kind: 'deploy' } },
];

/**
 * The demo model's whole behaviour, deterministic: results it is handed are reported (and an
 * answered question carries the request on); otherwise the latest request's keywords pick calls
 * among the offered tools; otherwise it says what it understands. Its first words in a thread
 * say that it is a demo.
 */
export function planDemoReply(prompt: DemoPrompt): DemoReply {
  const reply = prompt.outcomes.length > 0 ? replyToOutcomes(prompt) : replyToRequest(prompt);
  return prompt.answeredBefore ? reply : { ...reply, text: `${DEMO_MODEL_NOTICE}\n\n${reply.text}` };
}

function replyToOutcomes(prompt: DemoPrompt): DemoReply {
  const answers = prompt.outcomes.flatMap((outcome) => answerOf(outcome) ?? []);
  const reports = prompt.outcomes.filter((outcome) => answerOf(outcome) === undefined).map(describeOutcome);
  const [answer] = answers;
  if (answer === undefined) return { text: reports.join('\n\n'), toolCalls: [] };
  // The question was asked for the latest request: carry it on with the answer in place.
  const intents = parseDemoRequest(prompt.request);
  const about = intents.find((intent) => intent.kind === 'ask')?.about ?? 'region';
  const actions = actionsOf(intents).map((intent) => ({ ...intent, [about]: answer.text }));
  const proposal = propose(actions, prompt.tools);
  return { text: [...reports, `Thanks, ${answer.by}: \`${answer.text}\`.`, proposal.text].join('\n\n'), toolCalls: proposal.toolCalls };
}

function replyToRequest(prompt: DemoPrompt): DemoReply {
  const intents = parseDemoRequest(prompt.request);
  if (intents.length === 0) return { text: helpText(prompt.tools), toolCalls: [] };
  const ask = intents.find((intent) => intent.kind === 'ask');
  if (ask === undefined) return propose(actionsOf(intents), prompt.tools);
  const purpose = actionsOf(intents)
    .map((intent) => describeIntent(intent, { placement: false }))
    .join(' and ');
  if (!prompt.tools.has(ASK_USER_TOOL_NAME)) {
    return { text: `I would ask you which ${ask.about} to ${purpose} in, but this setup offers no \`${ASK_USER_TOOL_NAME}\` tool.`, toolCalls: [] };
  }
  return {
    text: `Before I ${purpose}, I need to know the ${ask.about}.`,
    toolCalls: [questionCall({ about: ask.about, purpose, tools: prompt.tools })],
  };
}

/** The actions of a request; "ask me which region" alone stands for the sandbox's usual restart. */
function actionsOf(intents: readonly DemoIntent[]): ActionIntent[] {
  const actions = intents.filter((intent): intent is ActionIntent => intent.kind !== 'ask');
  return actions.length > 0 ? actions : [{ kind: 'restart' }];
}

function propose(actions: readonly ActionIntent[], tools: ReadonlyMap<string, OfferedTool>): DemoReply {
  const sentences: string[] = [];
  const toolCalls: DemoToolCall[] = [];
  for (const intent of actions) {
    const tool = toolFor(intent, tools);
    if (tool === undefined) {
      sentences.push(`I can't ${describeIntent(intent)}: this setup offers no \`${preferredToolName(intent)}\` tool (it has ${toolList(tools)}).`);
      continue;
    }
    sentences.push(intent.kind === 'status' ? `Let me ${describeIntent(intent)}.` : `I'll ${describeIntent(intent)}.`);
    toolCalls.push(callFor(intent, tool));
  }
  return { text: sentences.join(' '), toolCalls };
}

function helpText(tools: ReadonlyMap<string, OfferedTool>): string {
  const available = EXAMPLES.filter((example) => toolFor(example.intent, tools) !== undefined).map((example) => `- \`${example.say}\``);
  if (tools.has(ASK_USER_TOOL_NAME) && toolFor({ kind: 'restart' }, tools)) available.push('- `restart the worker, ask me which region`');
  if (available.length === 0) return `I am only a demo and I know none of the tools this setup offers (${toolList(tools)}). Set OPENAI_API_KEY for a real model.`;
  return ["I am only a demo: I understand a few requests. Try one of these (mention me first):", ...available, 'A real model (OPENAI_API_KEY) understands anything.'].join('\n');
}

function toolList(tools: ReadonlyMap<string, OfferedTool>): string {
  const names = [...tools.keys()].filter((name) => name !== ASK_USER_TOOL_NAME);
  return names.length === 0 ? 'no tools' : names.map((name) => `\`${name}\``).join(', ');
}

/** The answer to one of its own questions, as text, with who gave it. */
function answerOf(outcome: ToolOutcome): { text: string; by: string } | undefined {
  if (outcome.toolName !== ASK_USER_TOOL_NAME || outcome.output.type !== 'json') return undefined;
  const value = outcome.output.value as { answeredBy?: unknown; answer?: unknown } | null;
  const answer = value?.answer;
  // An option is its text; a free-text reply is `{ answer }`; a form answer is shown as JSON.
  const text = typeof answer === 'string' ? answer : typeof (answer as { answer?: unknown } | null)?.answer === 'string' ? (answer as { answer: string }).answer : JSON.stringify(answer);
  return { text, by: typeof value?.answeredBy === 'string' ? value.answeredBy : 'you' };
}
