import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/store/state-store.js';
import { conversationOf } from '../helpers/fake-openai.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';
import { deferred } from '../helpers/deferred.js';

/**
 * Review (take-backs). A new message that finds the thread's step fully decided but not yet resumed
 * resumes it inline (handle-message.ts settlePendingStep → claimAndResume → runAndPublish). A quick
 * resumed answer is posted whole by postOutbox, whose clearing of the outbox is kept (saveAtEnd) with
 * a take-back; settlePendingStep then `flush`es it. Refused as fenced, the take-back deletes the
 * answer, "since the thread's new holder shows it again from the save before" (4e19742). But the new
 * holder takes over the MESSAGE item, whose take-in (handledTs) was never saved: it handles the
 * message from scratch, and handleMessage deletes `thread.outbox` ("an earlier answer still saved is
 * not this turn's"). The resume item queued by the click later finds the step resumed and no outbox.
 * The resumed turn's answer (the result of the call the approver just countersigned) is shown nowhere.
 * So is the text of a resumed turn that asks for another card, when the write of its step is refused.
 *
 * Stall modelled as the other stall tests do: the doomed bot's flush and its lock renewals wait
 * until the replica has taken the message over and answered it.
 */
const harness = useHarnesses();

const restartCall = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };

describe('a message resumes a decided step inline; its process stalls after posting the quick resumed answer', () => {
  it('the resumed answer still shows in the thread', async () => {
    const resumedAnswer = 'Restarted the worker in staging; all pods are ready.';
    const messageAnswer = 'Nothing else is failing right now.';
    const control = {
      holdLoad: false,
      loadReached: deferred(),
      loadReleased: deferred(),
      stalling: false,
      flushReached: deferred(),
      released: deferred(),
    };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      return {
        ...store,
        async getThreadAndDeletion(threadKey, post) {
          if (control.holdLoad) {
            control.holdLoad = false;
            control.loadReached.resolve();
            await control.loadReleased.promise;
          }
          return store.getThreadAndDeletion(threadKey, post);
        },
        async saveThread(thread, ttlMs, fence, options) {
          const last = thread.messages.at(-1);
          if (!control.stalling && thread.outbox === undefined && last?.role === 'assistant' && JSON.stringify(last.content).includes('all pods are ready')) {
            control.stalling = true;
            control.flushReached.resolve();
            await control.released.promise;
          }
          return store.saveThread(thread, ttlMs, fence, options);
        },
        async extendLock(fence, ttlMs) {
          if (control.stalling) {
            await control.released.promise;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          return store.extendLock(fence, ttlMs);
        },
      };
    };
    const h = await harness({ environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' }, sweepIntervalMs: 100, wrapStore });
    await h.startReplica();

    h.openai.enqueue({ toolCalls: [restartCall] }, { text: resumedAnswer }, { text: messageAnswer });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
    await h.settled();

    // Alice writes again; while her message is being handled (the thread is locked), Bob approves.
    control.holdLoad = true;
    await h.threadMessage({ user: 'UALICE', text: 'anything else failing?', threadTs });
    await control.loadReached.promise;
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => (h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks ?? []).length > 0 && JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks).includes('Approved by'), { message: 'the approval recorded' });
    control.loadReleased.resolve();

    // The message's item resumes the step inline, runs the call, posts the answer, then stalls.
    await control.flushReached.promise;
    expect(threadReplies(h, threadTs).filter((message) => message.text.includes('all pods are ready'))).toHaveLength(1);
    // The replica takes the message item over once the lock lapses and answers the message.
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === messageAnswer), { timeoutMs: 20_000, message: "the replica's answer to the message" });
    control.released.resolve();
    await waitFor(() => h.warnings().some((line) => line.includes('"event":"thread-fenced"')), { timeoutMs: 15_000, message: 'the stalled process to find itself fenced' });
    await h.settled();

    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
    const texts = threadReplies(h, threadTs).map((message) => message.text);
    expect(
      texts.filter((text) => text.includes('all pods are ready')),
      `the answer of the approved call is gone; thread: ${JSON.stringify(texts)}; chat.delete: ${JSON.stringify(h.slack.callsTo('chat.delete').map((call) => call.args.ts))}`,
    ).toHaveLength(1);
  }, 60_000);

  it('stalled right after its outbox save landed (before the post): the resumed answer still shows', async () => {
    const resumedAnswer = 'Restarted the worker in staging; all pods are ready.';
    const messageAnswer = 'Nothing else is failing right now.';
    const control = {
      holdLoad: false,
      loadReached: deferred(),
      loadReleased: deferred(),
      stalling: false,
      flushReached: deferred(),
      released: deferred(),
    };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      return {
        ...store,
        async getThreadAndDeletion(threadKey, post) {
          if (control.holdLoad) {
            control.holdLoad = false;
            control.loadReached.resolve();
            await control.loadReleased.promise;
          }
          return store.getThreadAndDeletion(threadKey, post);
        },
        async saveThread(thread, ttlMs, fence, options) {
          const last = thread.messages.at(-1);
          if (!control.stalling && thread.outbox !== undefined && last?.role === 'assistant' && JSON.stringify(last.content).includes('all pods are ready')) {
            // The outbox save lands; then the process stalls before it posts the answer.
            await store.saveThread(thread, ttlMs, fence, options);
            control.stalling = true;
            control.flushReached.resolve();
            await control.released.promise;
            return;
          }
          return store.saveThread(thread, ttlMs, fence, options);
        },
        async extendLock(fence, ttlMs) {
          if (control.stalling) {
            await control.released.promise;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          return store.extendLock(fence, ttlMs);
        },
      };
    };
    const h = await harness({ environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' }, sweepIntervalMs: 100, wrapStore });
    await h.startReplica();

    h.openai.enqueue({ toolCalls: [restartCall] }, { text: resumedAnswer }, { text: messageAnswer });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
    await h.settled();

    // Alice writes again; while her message is being handled (the thread is locked), Bob approves.
    control.holdLoad = true;
    await h.threadMessage({ user: 'UALICE', text: 'anything else failing?', threadTs });
    await control.loadReached.promise;
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => (h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks ?? []).length > 0 && JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks).includes('Approved by'), { message: 'the approval recorded' });
    control.loadReleased.resolve();

    // The message's item resumes the step inline, runs the call, saves the answer as its outbox, then stalls.
    await control.flushReached.promise;
    // The replica takes the message item over once the lock lapses and answers the message.
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === messageAnswer), { timeoutMs: 20_000, message: "the replica's answer to the message" });
    control.released.resolve();
    await waitFor(() => h.warnings().some((line) => line.includes('"event":"thread-fenced"')), { timeoutMs: 15_000, message: 'the stalled process to find itself fenced' });
    await h.settled();

    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
    const texts = threadReplies(h, threadTs).map((message) => message.text);
    expect(
      texts.filter((text) => text.includes('all pods are ready')),
      `the answer of the approved call is gone; thread: ${JSON.stringify(texts)}; chat.delete: ${JSON.stringify(h.slack.callsTo('chat.delete').map((call) => call.args.ts))}`,
    ).toHaveLength(1);
  }, 60_000);

  it('the resumed turn asks for another card and its step write is refused as fenced: its text still shows', async () => {
    const resumedText = 'Restarted the worker in staging. Prod needs the same:';
    const messageAnswer = 'Nothing else is failing right now.';
    const control = {
      holdLoad: false,
      loadReached: deferred(),
      loadReleased: deferred(),
      stalling: false,
      stepReached: deferred(),
      released: deferred(),
    };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      return {
        ...store,
        async getThreadAndDeletion(threadKey, post) {
          if (control.holdLoad) {
            control.holdLoad = false;
            control.loadReached.resolve();
            await control.loadReleased.promise;
          }
          return store.getThreadAndDeletion(threadKey, post);
        },
        async createStep(options) {
          // The resumed turn's step (the prod restart): posted text first, then this write stalls.
          if (!control.stalling && JSON.stringify(options.step.calls).includes('"prod"')) {
            control.stalling = true;
            control.stepReached.resolve();
            await control.released.promise;
          }
          return store.createStep(options);
        },
        async extendLock(fence, ttlMs) {
          if (control.stalling) {
            await control.released.promise;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          return store.extendLock(fence, ttlMs);
        },
      };
    };
    const h = await harness({ environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' }, sweepIntervalMs: 100, wrapStore });
    await h.startReplica();

    // Answered by what the request ends with, so the replica's turns get the answer their history asks for.
    h.openai.setResponder((request) => {
      const last = conversationOf(request).at(-1);
      if (last?.role === 'tool') return { text: resumedText, toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] };
      if (last?.text?.includes('anything else failing?')) return { text: messageAnswer };
      return { toolCalls: [restartCall] };
    });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
    await h.settled();

    control.holdLoad = true;
    await h.threadMessage({ user: 'UALICE', text: 'anything else failing?', threadTs });
    await control.loadReached.promise;
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks ?? []).includes('Approved by'), { message: 'the approval recorded' });
    control.loadReleased.resolve();

    // The message's item resumes the step inline, runs the call, posts the text, then stalls writing the new step.
    await control.stepReached.promise;
    expect(threadReplies(h, threadTs).filter((message) => message.text === resumedText)).toHaveLength(1);
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === messageAnswer), { timeoutMs: 20_000, message: "the replica's answer to the message" });
    control.released.resolve();
    await waitFor(() => h.warnings().some((line) => line.includes('"event":"thread-fenced"')), { timeoutMs: 15_000, message: 'the stalled process to find itself fenced' });
    await h.settled();

    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
    const texts = threadReplies(h, threadTs).map((message) => message.text);
    expect(texts.filter((text) => text === resumedText), `the resumed turn's text is gone; thread: ${JSON.stringify(texts)}`).toHaveLength(1);
    // The message closed the step the resumed turn opened: no card is left to decide.
    expect(h.slack.messages(CHANNEL, threadTs).filter((message) => cardButtons(message.blocks).length > 0)).toEqual([]);
  }, 60_000);
});
