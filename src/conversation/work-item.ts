import { randomUUID } from 'node:crypto';
import { z } from 'zod';

/**
 * The W3C trace context of the span that queued the item, so the turn that runs it (maybe in
 * another process) continues the same trace. A malformed one is dropped, never the item.
 */
const traceparent = z.string().max(128).optional().catch(undefined);

/**
 * What a thread's queue holds. Items cross processes through the store, so they are validated on
 * the way out like any other untrusted input.
 */
const messageItemSchema = z.object({
  kind: z.literal('message'),
  userId: z.string().min(1),
  text: z.string(),
  ts: z.string().min(1),
  teamId: z.string().min(1),
  channel: z.string().min(1),
  threadTs: z.string().min(1),
  /** First contact inside an existing thread: earlier messages are read for context. */
  readEarlierMessages: z.boolean(),
  traceparent,
});

const resumeItemSchema = z.object({
  kind: z.literal('resume'),
  stepId: z.string().min(1),
  /** Where to say so if the resume fails before the step could be read. */
  channel: z.string().min(1),
  threadTs: z.string().min(1),
  traceparent,
});

/**
 * "Try again" after a failed turn: the same history, asked again for the same requester. The
 * click names the failure it was shown with; who clicked is checked when the item runs.
 */
const retryItemSchema = z.object({
  kind: z.literal('retry'),
  failureId: z.string().min(1),
  clickedBy: z.string().min(1),
  teamId: z.string().min(1),
  channel: z.string().min(1),
  threadTs: z.string().min(1),
  traceparent,
});

const workItemSchema = z.discriminatedUnion('kind', [messageItemSchema, resumeItemSchema, retryItemSchema]);

export type MessageWorkItem = z.infer<typeof messageItemSchema>;
export type ResumeWorkItem = z.infer<typeof resumeItemSchema>;
export type RetryWorkItem = z.infer<typeof retryItemSchema>;
export type WorkItem = z.infer<typeof workItemSchema>;

/** Each encoding is unique (an id rides along; decoding drops it), so finishing an item twice cannot finish the next one. */
export function encodeWorkItem(item: WorkItem): string {
  return JSON.stringify({ ...item, id: randomUUID() });
}

export function decodeWorkItem(encoded: string): WorkItem | undefined {
  try {
    const parsed = workItemSchema.safeParse(JSON.parse(encoded));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Names an item alike in every process that handles it (one that takes it over after a stall, a
 * re-delivery): what the thread records of the item it was in (`ThreadState.inlineResume`) is
 * matched by it. A resume item is named by its step, so `resumeItemKey` tells a step's own item.
 */
export function workItemKey(item: WorkItem): string {
  if (item.kind === 'message') return `message:${item.ts}`;
  if (item.kind === 'resume') return resumeItemKey(item.stepId);
  return `retry:${item.failureId}`;
}

export function resumeItemKey(stepId: string): string {
  return `resume:${stepId}`;
}
