import type { BenchContext } from './bench-context.js';
import { bareClicks, chatSdkClicks } from './click-requests.js';
import type { BenchScale } from './scale.js';
import { mentionRequest } from './workload.js';

/**
 * Sends both processes every kind of request before anything is measured, so the first measured
 * burst does not pay for JIT compilation, lazy module loading or growing the heap to its working
 * size. The bot walks the whole click path too: mention → card → approve → resumed answer.
 */
export async function warmUp(options: { context: BenchContext; scale: BenchScale }): Promise<void> {
  const { context } = options;
  const { warmup } = options.scale;
  const bareMentions = context.newThreads(warmup.bareRequests).map((thread) => mentionRequest(thread, 'card'));
  await context.send({ url: context.bare.eventsUrl, concurrency: warmup.concurrency, requests: bareMentions });
  await context.send({ url: context.bare.eventsUrl, concurrency: warmup.concurrency, requests: bareClicks(warmup.bareRequests) });
  await context.mentionBurst({ threads: context.newThreads(warmup.textTurns), mode: 'text', concurrency: warmup.concurrency });
  const cycleThreads = context.newThreads(warmup.cardCycles);
  await context.mentionBurst({ threads: cycleThreads, mode: 'card', concurrency: warmup.concurrency });
  await context.clickBurst({ cards: await context.cardsFor(cycleThreads), concurrency: warmup.concurrency });
  await context.waitForBotIdle();
  if (context.chat) {
    // The Chat SDK bot gets as many mentions and clicks as the bare app, and the posts they cause land.
    const chat = context.chat;
    context.observer.poll();
    const expected = context.observer.chatSdkPostCount() + 2 * warmup.bareRequests;
    await context.send({ url: chat.eventsUrl, concurrency: warmup.concurrency, requests: context.newChatThreads(warmup.bareRequests).map((thread) => mentionRequest(thread, 'card')) });
    await context.send({ url: chat.eventsUrl, concurrency: warmup.concurrency, requests: chatSdkClicks(context.newChatThreads(warmup.bareRequests)) });
    await context.waitForSlack({ done: () => context.observer.chatSdkPostCount() >= expected, message: 'the Chat SDK bot\'s warm-up posts' });
    await context.waitForIdle(chat.handle.pid);
  }
}
