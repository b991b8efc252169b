import type { LanguageModelV4Content } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mockStreamingModel, type GeneratedReply } from '../../test/helpers/mock-streaming-model.js';
import { runTurn } from '../agent/run-turn.js';
import { defaultConfig } from '../config/config-file.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { FencedError } from '../store/fenced-error.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState, type ThreadState } from '../store/thread-state.js';
import { createLease } from './lease.js';
import type { LiveAnswer } from './live-answer.js';
import type { ThreadMessenger } from './thread-messenger.js';
import { createMessageTakeBacks } from './message-take-back.js';
import { createTurnScope, type TurnScope } from './turn-scope.js';
import { createUnansweredTurn, unansweredNotice, unansweredReason, withoutEmptyAnswer } from './unanswered-turn.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const reply = (content: LanguageModelV4Content[], finish: 'stop' | 'tool-calls' | 'length' | 'content-filter'): GeneratedReply => ({ content, finishReason: { unified: finish, raw: finish }, usage, warnings: [] });
const getPods = (id: string) => reply([{ type: 'tool-call', toolCallId: id, toolName: 'get_pods', input: '{"namespace":"staging"}' }], 'tool-calls');
/** The chat surface's judgement, for these tests: blank text, or an empty code block, shows nothing. */
const showsNothing = (markdown: string) => markdown.trim() === '' || markdown.trim() === '```\n```';
const tools: ToolDefinition[] = [{ name: 'get_pods', description: 'List pods', inputSchema: z.object({ namespace: z.string() }), approval: 'never', execute: async () => ['pod-a'] }];

/** What a real turn adds to the history for these model replies. */
async function outcomeOf(replies: GeneratedReply[], maxSteps: number) {
  const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1' };
  return runTurn({ model: mockStreamingModel(replies), instructions: 'test', definitions: tools, policy: defaultConfig().policy, messages: [{ role: 'user', content: 'pods?' }], context, maxSteps });
}

async function responseMessagesOf(replies: GeneratedReply[], maxSteps: number): Promise<ModelMessage[]> {
  const outcome = await outcomeOf(replies, maxSteps);
  expect(outcome.text.trim()).toBe('');
  return outcome.responseMessages;
}

describe('why a turn ended without an answer', () => {
  it('is the step limit when the last allowed step still called tools', async () => {
    const responseMessages = await responseMessagesOf([getPods('c1'), getPods('c2'), getPods('c3')], 3);
    expect(unansweredReason({ responseMessages, text: '', maxSteps: 3, showsNothing })).toEqual({ kind: 'step-limit', steps: 3 });
    expect(unansweredNotice({ kind: 'step-limit', steps: 3 })).toContain('I stopped after 3 steps without finishing');
  });

  it('counts the steps of the rounds the same turn took before, resumed at once in its work item', async () => {
    // Two steps were taken before: this round had one left, and still called tools in it.
    const outcome = await outcomeOf([getPods('c1')], 1);
    expect(outcome.steps).toBe(1);
    expect(unansweredReason({ responseMessages: outcome.responseMessages, text: '', maxSteps: 3, stepsBefore: 2, showsNothing })).toEqual({ kind: 'step-limit', steps: 3 });
    // Short of the limit it was not stopped there (only silent).
    expect(unansweredReason({ responseMessages: outcome.responseMessages, text: '', maxSteps: 3, stepsBefore: 1, showsNothing })).toEqual({ kind: 'no-answer' });
  });

  it('is the step limit when the model commented on its way there, and an answer when it finished', async () => {
    const commenting = (id: string, text: string) => reply([{ type: 'text', text }, { type: 'tool-call', toolCallId: id, toolName: 'get_pods', input: '{"namespace":"staging"}' }], 'tool-calls');
    const stopped = await outcomeOf([commenting('c1', 'Checking staging first.'), commenting('c2', 'Now prod.')], 2);
    expect(stopped.text).toContain('Now prod.');
    expect(unansweredReason({ responseMessages: stopped.responseMessages, text: stopped.text, maxSteps: 2, showsNothing })).toEqual({ kind: 'step-limit', steps: 2 });

    const answered = await outcomeOf([commenting('c1', 'Checking staging first.'), reply([{ type: 'text', text: 'pod-a runs.' }], 'stop')], 2);
    expect(unansweredReason({ responseMessages: answered.responseMessages, text: answered.text, maxSteps: 2, showsNothing })).toBeUndefined();
  });

  it('is no answer when the model said nothing, first or after tools, even on the last allowed step', async () => {
    const cases: Array<[GeneratedReply[], number]> = [
      [[reply([], 'content-filter')], 3],
      [[reply([{ type: 'text', text: '' }], 'stop')], 3],
      [[getPods('c1'), reply([], 'length')], 3],
      [[getPods('c1'), getPods('c2'), reply([], 'content-filter')], 3],
    ];
    for (const [replies, maxSteps] of cases) {
      const responseMessages = await responseMessagesOf(replies, maxSteps);
      expect(unansweredReason({ responseMessages: withoutEmptyAnswer(responseMessages, { showsNothing }), text: '', maxSteps, showsNothing })).toEqual({ kind: 'no-answer' });
    }
    expect(unansweredNotice({ kind: 'no-answer' })).toContain('The model returned no answer');
  });

  it('is a cut-off response when the model was stopped while calling tools, whatever it wrote before', async () => {
    const cutOff = reply([{ type: 'text', text: 'Checking staging.' }, { type: 'tool-call', toolCallId: 'c2', toolName: 'get_pods', input: '{"namespace":"staging"}' }], 'length');
    const outcome = await outcomeOf([getPods('c1'), cutOff], 3);
    expect(outcome.cutOff).toEqual({ finishReason: 'length' });
    expect(unansweredReason({ responseMessages: outcome.responseMessages, text: outcome.text, maxSteps: 3, showsNothing, cutOff: outcome.cutOff })).toEqual({ kind: 'cut-off', finishReason: 'length' });
    // Try again is only allowed where the model is asked next: the history ends on the results.
    expect(withoutEmptyAnswer(outcome.responseMessages, { showsNothing }).at(-1)?.role).toBe('tool');
    expect(unansweredNotice({ kind: 'cut-off', finishReason: 'length' })).toContain("The model's response was cut off (finish reason `length`: its output limit)");
    expect(unansweredNotice({ kind: 'cut-off', finishReason: 'content-filter' })).toContain('(finish reason `content-filter`) while it was asking for tools, so none of those calls ran');
  });

  it('keeps what ran and drops only a last message with neither text nor a call, so Try again asks the model again', async () => {
    // The mock streams content other than text as it is given: these are the reasoning stream parts.
    const reasoningParts = [{ type: 'reasoning-start', id: 'r1' }, { type: 'reasoning-delta', id: 'r1', delta: 'thinking…' }, { type: 'reasoning-end', id: 'r1' }];
    const reasoningOnly = reply(reasoningParts as unknown as LanguageModelV4Content[], 'length');
    const blank = reply([{ type: 'text', text: '  \n' }], 'stop');
    for (const last of [reasoningOnly, blank]) {
      const responseMessages = await responseMessagesOf([getPods('c1'), last], 3);
      expect(responseMessages.at(-1)?.role).toBe('assistant');
      const kept = withoutEmptyAnswer(responseMessages, { showsNothing });
      expect(kept.map((message) => message.role)).toEqual(['assistant', 'tool']);
      expect(unansweredReason({ responseMessages: kept, text: '', maxSteps: 3, showsNothing })).toEqual({ kind: 'no-answer' });
    }
  });

  it('is no answer when the text shows nothing, and Try again asks the model again without it', async () => {
    // Not blank, but rendered to nothing: the thread would get no message at all.
    const emptyCodeBlock = reply([{ type: 'text', text: '```\n```' }], 'stop');
    for (const replies of [[emptyCodeBlock], [getPods('c1'), emptyCodeBlock]]) {
      const outcome = await outcomeOf(replies, 3);
      expect(outcome.text).toBe('```\n```');
      expect(unansweredReason({ responseMessages: outcome.responseMessages, text: outcome.text, maxSteps: 3, showsNothing })).toEqual({ kind: 'no-answer' });
      const kept = withoutEmptyAnswer(outcome.responseMessages, { showsNothing });
      expect(kept.at(-1)?.role ?? 'user').not.toBe('assistant');
    }
    // Text that shows something is an answer, and stays in the history.
    const answered = await outcomeOf([reply([{ type: 'text', text: '```\npod-a\n```' }], 'stop')], 3);
    expect(unansweredReason({ responseMessages: answered.responseMessages, text: answered.text, maxSteps: 3, showsNothing })).toBeUndefined();
    expect(withoutEmptyAnswer(answered.responseMessages, { showsNothing })).toEqual(answered.responseMessages);
  });
});

describe('recording a turn that ended without an answer', () => {
  function record(options: { retryOf?: string }) {
    const saves: Array<{ failedTurn: ThreadState['failedTurn']; after?: 'the notice' }> = [];
    let noticePosted = false;
    const save = (thread: ThreadState) => void saves.push({ failedTurn: structuredClone(thread.failedTurn), ...(noticePosted ? { after: 'the notice' as const } : {}) });
    const scope = {
      save: async (thread: ThreadState) => save(thread),
      saveAtEnd: save,
      messenger: { postNotice: async () => void (noticePosted = true) },
    } as unknown as TurnScope;
    const thread = newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1);
    const recordUnansweredTurn = createUnansweredTurn({ logger: pino({ level: 'silent' }), now: () => 2 });
    const answer = { streamed: '' } as unknown as LiveAnswer;
    return { saves, done: recordUnansweredTurn(scope, thread, { reason: { kind: 'no-answer' }, text: '', requesterId: 'UALICE', answer, ...options }) };
  }

  it('of a retried turn, names the failure it retried and keeps its notice until it is posted', async () => {
    const { saves, done } = record({ retryOf: 'failure-1' });
    await done;
    expect(saves).toEqual([
      { failedTurn: expect.objectContaining({ retryOf: 'failure-1', unpostedNotice: unansweredNotice({ kind: 'no-answer' }) }) },
      { failedTurn: expect.not.objectContaining({ unpostedNotice: expect.anything() }), after: 'the notice' },
    ]);
  });

  it('of a first turn, keeps its notice until it is posted too', async () => {
    const { saves, done } = record({});
    await done;
    expect(saves).toEqual([
      { failedTurn: { id: expect.any(String), requesterId: 'UALICE', at: 2, unpostedNotice: unansweredNotice({ kind: 'no-answer' }) } },
      { failedTurn: { id: expect.any(String), requesterId: 'UALICE', at: 2 }, after: 'the notice' },
    ]);
  });
});

describe('the text of a turn that ended without an answer, posted whole', () => {
  /** A turn whose text lands in `posted`; its save is refused as fenced when `fenced` (another process took the thread). */
  async function recordPosted(options: { fenced: boolean; posted: string[]; answerTs?: string[] }) {
    const fence = { threadKey: 'T1:C1:1.1', token: 't1' };
    const deleted: string[] = [];
    const store = {
      fenceState: async () => (options.fenced ? 'taken' : 'current'),
      saveThread: async () => {
        if (options.fenced) throw new FencedError(fence.threadKey);
      },
    } as unknown as StateStore;
    const messenger = {
      postAnswer: async () => options.posted,
      postNotice: async () => {},
      deleteMessages: async ({ ts }: { ts: readonly string[] }) => {
        deleted.push(...ts);
        return { ts: [] };
      },
    } as unknown as ThreadMessenger;
    const lease = createLease({ store, fence, heldUntil: () => Date.now() + 60_000 });
    const scope = createTurnScope({ store, messenger, lease, limits: { historyTtlMs: 60_000, maxMessages: 100, maxBytes: 1_000_000 }, now: Date.now, takeBacks: createMessageTakeBacks({ store, messenger, logger: pino({ level: 'silent' }) }) });
    const thread = newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1);
    if (options.answerTs) thread.answerTs = options.answerTs;
    const recordUnansweredTurn = createUnansweredTurn({ logger: pino({ level: 'silent' }), now: () => 2 });
    const answer = { streamed: '' } as unknown as LiveAnswer;
    const done = recordUnansweredTurn(scope, thread, { reason: { kind: 'step-limit', steps: 3 }, text: 'Checking staging first.', requesterId: 'UALICE', answer });
    return { deleted, done };
  }

  it('is taken back when its save is refused as fenced: the new holder runs the turn again and shows it', async () => {
    const { deleted, done } = await recordPosted({ fenced: true, posted: ['m1', 'm2'] });
    await expect(done).rejects.toBeInstanceOf(FencedError);
    expect(deleted).toEqual(['m1', 'm2']);
  });

  it('keeps the messages the thread has on record (the new holder rewrites them), and all of it once saved', async () => {
    const refused = await recordPosted({ fenced: true, posted: ['m1', 'm2'], answerTs: ['m1'] });
    await expect(refused.done).rejects.toBeInstanceOf(FencedError);
    expect(refused.deleted).toEqual(['m2']);
    const saved = await recordPosted({ fenced: false, posted: ['m1', 'm2'] });
    await saved.done;
    expect(saved.deleted).toEqual([]);
  });
});
