import type { ModelMessage } from 'ai';
import { beforeAll, describe, expect, it } from 'vitest';
import { approvedRunsFor } from '../../agent/approved-runs.js';
import { resumeToolMessage } from '../../agent/decision-messages.js';
import { interruptedResults } from '../../agent/interrupted-calls.js';
import { runTurn, type ApprovalRequest, type TurnOutcome } from '../../agent/run-turn.js';
import type { Decision } from '../../approvals/pending-step.js';
import { decidedStep } from '../../approvals/pending-step.test-support.js';
import type { CountersignConfig } from '../../config/config-schema.js';
import { userMessage } from '../../conversation/user-messages.js';
import { askUserTool } from '../../tools/ask-user.js';
import { createCommandTool } from '../../tools/command/command-tool.js';
import type { ToolDefinition } from '../../tools/tool-definition.js';
import { loadSandboxExampleConfig } from '../example/sandbox-example-config.js';
import { createDemoModel, DEMO_MODEL_NOTICE } from './demo-model.js';

/**
 * The demo model in the bot's real turn runner, with the sandbox's real example tools (which run
 * their scripts) and policy: the conversations a newcomer has in the sandbox, decisions included.
 */
const model = createDemoModel({ chunkDelay: { minMs: 0, maxMs: 0 } });
const context = { requesterId: 'U0ALICE', teamId: 'T0SANDBOX', channel: 'C0OPS', threadTs: '1.1' };

let config: CountersignConfig;
let definitions: ToolDefinition[];
beforeAll(async () => {
  config = await loadSandboxExampleConfig();
  definitions = [...config.tools.map((tool) => createCommandTool(tool)), askUserTool];
});

interface Conversation {
  messages: ModelMessage[];
  outcome: TurnOutcome;
}

async function mention(text: string): Promise<Conversation> {
  const messages = [userMessage({ userId: 'U0ALICE', text })];
  const outcome = await runTurn({ model, instructions: config.instructions, definitions, policy: config.policy, messages, context, maxSteps: 10 });
  return { messages: [...messages, ...outcome.responseMessages], outcome };
}

/** Decides the paused calls the way the bot does, and runs the turn on. */
async function decide(conversation: Conversation, decisions: (request: ApprovalRequest) => Omit<Decision, 'at'>, edits: (request: ApprovalRequest) => unknown = () => undefined): Promise<Conversation> {
  const { approvalRequests } = conversation.outcome;
  const step = decidedStep(
    approvalRequests,
    Object.fromEntries(approvalRequests.map((request) => [request.approvalId, decisions(request)])),
    Object.fromEntries(approvalRequests.flatMap((request) => (edits(request) === undefined ? [] : [[request.approvalId, edits(request)]]))),
  );
  const messages = [...conversation.messages, resumeToolMessage(step)];
  const outcome = await runTurn({ model, instructions: config.instructions, definitions, policy: config.policy, messages, context, maxSteps: 10, approvedRuns: approvedRunsFor(step) });
  return { messages: [...messages, ...outcome.responseMessages], outcome };
}

const approvedByBob = (): Omit<Decision, 'at'> => ({ outcome: 'approved', userId: 'U0BOB' });
const pending = (conversation: Conversation) => conversation.outcome.approvalRequests.map((request) => [request.kind, request.toolName, request.input]);

describe('the demo model in the bot', () => {
  it('proposes a restart for approval, and reports the output once approved', async () => {
    const asked = await mention('restart the worker in staging');
    expect(asked.outcome.text).toBe(`${DEMO_MODEL_NOTICE}\n\nI'll restart \`worker\` in staging.`);
    expect(pending(asked)).toEqual([['approval', 'restart_service', { service: 'worker', namespace: 'staging', region: 'eu-west-1' }]]);

    const done = await decide(asked, approvedByBob);
    expect(done.outcome.approvalRequests).toEqual([]);
    expect(done.outcome.text).toContain('`restart_service` ran: `deployment "worker" successfully rolled out`');
    expect(done.outcome.text).toContain('would run: kubectl --context eu-west-1 rollout restart deployment/worker -n staging');
    expect(done.outcome.text).not.toContain(DEMO_MODEL_NOTICE);
  });

  it('proposes scale_deployment with the parsed deployment, count and namespace', async () => {
    const asked = await mention('scale api to 5 in prod');
    expect(pending(asked)).toEqual([['approval', 'scale_deployment', { deployment: 'api', replicas: 5, namespace: 'prod', region: 'eu-west-1' }]]);
  });

  it('checks the pods at once: get_pods needs no approval', async () => {
    const { outcome } = await mention("what's running in prod?");
    expect(outcome.approvalRequests).toEqual([]);
    expect(outcome.text).toContain('Let me check the pods in prod.');
    expect(outcome.text).toContain('would run: kubectl --context eu-west-1 get pods -n prod');
    expect(outcome.text).toMatch(/worker-[a-z0-9]+-[a-z0-9]+ +1\/1 +Running/);
  });

  it('says a denial and its reason, and does not retry', async () => {
    const done = await decide(await mention('restart the worker in staging'), () => ({ outcome: 'denied', userId: 'U0BOB', reason: 'not during the freeze' }));
    expect(done.outcome.text).toBe("`restart_service` was not run: declined by <@U0BOB>: not during the freeze. I won't try it again unless you ask me to.");
    expect(done.outcome.approvalRequests).toEqual([]);
  });

  it('says when a human edited the call and which version ran', async () => {
    const done = await decide(await mention('scale api to 5 in prod'), approvedByBob, (request) => ({ ...(request.input as object), replicas: 3 }));
    expect(done.outcome.text).toContain('<@UBOB> edited `scale_deployment` before approving it, so version 2 ran, not the one I proposed (changed: `replicas: 5 → 3`).');
    expect(done.outcome.text).toContain('deployment.apps/api scaled (3 → 3 replicas)');
  });

  it('says when the approval request expired', async () => {
    const done = await decide(await mention('deploy api 1.5.0 to staging'), () => ({ outcome: 'expired', userId: 'U0ALICE' }));
    expect(done.outcome.text).toBe('The approval request for `deploy_version` expired before anyone decided, so it did not run. Ask me again if it is still needed.');
  });

  it('says when a call was interrupted by a stopped bot', async () => {
    const asked = await mention('restart the worker in staging');
    const [request] = asked.outcome.approvalRequests;
    const step = decidedStep(asked.outcome.approvalRequests, { [request!.approvalId]: approvedByBob() });
    const resume = resumeToolMessage(step);
    const messages = [...asked.messages, resume];
    // What crash recovery does when the call had started: its result says it was interrupted.
    const interrupted = interruptedResults(messages, new Set([request!.toolCallId]));
    const last = messages.at(-1)!;
    if (last.role === 'tool') last.content.push(...interrupted);
    const { text } = await runTurn({ model, instructions: config.instructions, definitions, policy: config.policy, messages, context, maxSteps: 10, approvedRuns: approvedRunsFor(step) });
    expect(text).toContain('`restart_service` was interrupted: the bot stopped while it was running');
  });

  it('asks which region, then proposes the restart there', async () => {
    const asked = await mention('restart the worker, ask me which region');
    expect(asked.outcome.text).toBe(`${DEMO_MODEL_NOTICE}\n\nBefore I restart \`worker\`, I need to know the region.`);
    expect(pending(asked)).toEqual([['question', 'ask_user', { question: 'Which region should I restart `worker` in?', options: ['eu-west-1', 'us-east-1', 'ap-southeast-2'] }]]);

    const answered = await decide(asked, () => ({ outcome: 'answered', userId: 'U0ALICE', answer: 'us-east-1' }));
    expect(answered.outcome.text).toBe("Thanks, <@U0ALICE>: `us-east-1`.\n\nI'll restart `worker` in staging (us-east-1).");
    expect(pending(answered)).toEqual([['approval', 'restart_service', { service: 'worker', namespace: 'staging', region: 'us-east-1' }]]);

    const done = await decide(answered, approvedByBob);
    expect(done.outcome.text).toContain('would run: kubectl --context us-east-1 rollout restart deployment/worker -n staging');
  });

  it('answers anything else with what it understands', async () => {
    const { outcome } = await mention('tell me a joke');
    expect(outcome.approvalRequests).toEqual([]);
    expect(outcome.text).toContain('I am only a demo');
    for (const example of ["what's running in staging", 'restart the worker in staging', 'scale api to 5 in prod', 'deploy api 1.5.0 to staging', 'restart the worker, ask me which region']) {
      expect(outcome.text).toContain(`\`${example}\``);
    }
  });

  it('reports a failed command from the simulated cluster', async () => {
    const done = await decide(await mention('restart billing in staging'), approvedByBob);
    expect(done.outcome.text).toContain('`restart_service` failed (exit code 1):');
    expect(done.outcome.text).toContain('deployments.apps "billing" not found');
  });
});
