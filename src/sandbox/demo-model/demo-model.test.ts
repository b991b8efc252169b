import { generateText, stepCountIs, streamText, tool, type ModelMessage, type ToolSet } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDemoModel, DEMO_MODEL_NOTICE } from './demo-model.js';

const model = createDemoModel({ chunkDelay: { minMs: 0, maxMs: 0 } });
const ask = (text: string): ModelMessage[] => [{ role: 'user', content: `<@U0ALICE> says:\n${text}` }];

/** Tools shaped like the sandbox example's, recording what ran. */
function exampleTools(ran: unknown[]): ToolSet {
  const place = { namespace: z.enum(['staging', 'prod']).default('staging'), region: z.enum(['eu-west-1', 'us-east-1']).default('eu-west-1') };
  return {
    get_pods: tool({ description: 'List pods', inputSchema: z.strictObject(place), execute: async (input) => (ran.push(['get_pods', input]), { exitCode: 0, stdout: 'NAME   READY\nworker-1   1/1', stderr: '' }) }),
    restart_service: tool({ description: 'Restart', inputSchema: z.strictObject({ service: z.string(), ...place }), execute: async (input) => (ran.push(['restart_service', input]), { exitCode: 0, stdout: 'deployment "worker" successfully rolled out', stderr: '' }) }),
    scale_deployment: tool({ description: 'Scale', inputSchema: z.strictObject({ deployment: z.string(), replicas: z.int(), ...place }), execute: async (input) => (ran.push(['scale_deployment', input]), { exitCode: 0, stdout: 'scaled', stderr: '' }) }),
  };
}

describe('the demo model with streamText', () => {
  it('streams its text in several chunks, says it is a demo, and reports usage', async () => {
    const result = streamText({ model, messages: ask('hello'), tools: exampleTools([]) });
    const deltas: string[] = [];
    for await (const part of result.fullStream) if (part.type === 'text-delta') deltas.push(part.text);

    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe(await result.text);
    expect(await result.text).toMatch(new RegExp(`^${escapeRegExp(DEMO_MODEL_NOTICE)}\\n\\nI am only a demo`));
    expect(await result.text).toContain('`scale api to 5 in prod`');
    const usage = await result.totalUsage;
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeGreaterThan(0);
  });

  it('pauses between chunks when asked to, so the streaming can be seen', async () => {
    const slow = createDemoModel({ chunkDelay: { minMs: 20, maxMs: 20 } });
    const started = performance.now();
    const arrivals: number[] = [];
    for await (const part of streamText({ model: slow, messages: ask('hello'), tools: {} }).fullStream) if (part.type === 'text-delta') arrivals.push(performance.now() - started);
    expect(arrivals.length).toBeGreaterThan(3);
    // Half the asked-for pause per gap: a model that does not pause takes about a millisecond in all, and a
    // loaded machine delays arrivals unevenly (the first one late shortens the measured span; seen in CI).
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(10 * (arrivals.length - 1));
  });

  it('calls the tool the keywords pick, runs it, and answers from its output', async () => {
    const ran: unknown[] = [];
    const result = streamText({ model, messages: ask('restart the worker in staging'), tools: exampleTools(ran), stopWhen: stepCountIs(3) });
    const text = (await result.steps).map((step) => step.text).join('\n\n');

    expect(ran).toEqual([['restart_service', { service: 'worker', namespace: 'staging', region: 'eu-west-1' }]]);
    expect(text).toContain("I'll restart `worker` in staging.");
    expect(text).toContain('`restart_service` ran: `deployment "worker" successfully rolled out`');
    expect(text.indexOf(DEMO_MODEL_NOTICE)).toBe(0);
    expect(text.lastIndexOf(DEMO_MODEL_NOTICE)).toBe(0);
  });

  it('parses names, numbers and namespaces, keeping to the keys the schema has', async () => {
    const ran: unknown[] = [];
    await generateText({ model, messages: ask('scale api to 5 in prod'), tools: exampleTools(ran), stopWhen: stepCountIs(2) });
    expect(ran).toEqual([['scale_deployment', { deployment: 'api', replicas: 5, namespace: 'prod', region: 'eu-west-1' }]]);
  });

  it('says so when the tool a request needs is not offered, and calls nothing', async () => {
    const { get_pods } = exampleTools([]);
    const result = await generateText({ model, messages: ask('scale api to 5 in prod'), tools: { get_pods: get_pods! } });
    expect(result.toolCalls).toEqual([]);
    expect(result.text).toContain("I can't scale `api` to 5 replicas in prod: this setup offers no `scale_deployment` tool (it has `get_pods`).");
  });

  it('uses a tool named alike from another config, with its own name for the deployment', async () => {
    const ran: unknown[] = [];
    const tools = { restart_app: tool({ description: 'Restart an app', inputSchema: z.strictObject({ app: z.string() }), execute: async (input) => (ran.push(input), 'ok') }) };
    await generateText({ model, messages: ask('restart web'), tools, stopWhen: stepCountIs(2) });
    expect(ran).toEqual([{ app: 'web' }]);
  });

  it('asks with ask_user when told to, offering the choices the tools allow', async () => {
    const tools = { ...exampleTools([]), ask_user: tool({ description: 'Ask', inputSchema: z.object({ question: z.string(), options: z.array(z.string()).optional() }) }) };
    const result = await generateText({ model, messages: ask('restart the worker, ask me which region'), tools });
    expect(result.toolCalls.map((call) => [call.toolName, call.input])).toEqual([
      ['ask_user', { question: 'Which region should I restart `worker` in?', options: ['eu-west-1', 'us-east-1'] }],
    ]);
    expect(result.finishReason).toBe('tool-calls');
  });

  it('gives its notice only in its first answer of a conversation', async () => {
    const messages: ModelMessage[] = [...ask('hello'), { role: 'assistant', content: 'earlier answer' }, ...ask('hello again')];
    const result = await generateText({ model, messages, tools: exampleTools([]) });
    expect(result.text).not.toContain(DEMO_MODEL_NOTICE);
    expect(result.text).toMatch(/^I am only a demo/);
  });

  it('stops streaming when aborted', async () => {
    const slow = createDemoModel({ chunkDelay: { minMs: 50, maxMs: 50 } });
    const controller = new AbortController();
    const result = streamText({ model: slow, messages: ask('hello'), tools: {}, abortSignal: controller.signal, onError: () => {} });
    const seen: string[] = [];
    for await (const part of result.fullStream) {
      seen.push(part.type);
      if (part.type === 'text-delta') controller.abort();
    }
    expect(seen.filter((type) => type === 'text-delta')).toHaveLength(1);
    expect(seen).toContain('abort');
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
