import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * One trace per turn, from the Slack event to the answer, across the wait for people: the step
 * and the queued items carry the trace context through Redis, as they would to another process.
 */
const harness = useHarnesses();

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const spans = () => exporter.getFinishedSpans();
  const named = (name: string) => spans().filter((span) => span.name === name);
  const one = (name: string): ReadableSpan => {
    const found = named(name);
    expect(found.map((span) => span.name)).toEqual([name]);
    return found[0]!;
  };
  return { provider, spans, named, one };
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan) => span.spanContext().spanId;

describe('tracing', () => {
  it('traces mention → card → approval → tool → answer as one trace, each phase a span under the one that led to it', async () => {
    const traces = tracing();
    const h = await harness({ tracerProvider: traces.provider });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text?.includes('Restarted.')), { message: 'the answer' });
    await h.settled();

    const event = traces.one('countersign.slack_event');
    const [paused, resumed] = traces.named('countersign.turn').sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    const cardSpan = traces.one('countersign.card');
    const decision = traces.one('countersign.decision');
    const wait = traces.one('countersign.approval_wait');
    const tool = traces.one('execute_tool restart_service');
    const answer = traces.one('countersign.answer');
    const modelCalls = traces.named('chat gpt-4o-mini');

    expect(new Set(traces.spans().map((span) => span.spanContext().traceId)).size).toBe(1);
    expect(parentOf(event)).toBeUndefined();
    expect(parentOf(paused!)).toBe(idOf(event));
    expect(parentOf(cardSpan)).toBe(idOf(paused!));
    // The step remembered the card's span: the decision and the wait join it, and the resumed turn follows the decision.
    expect(parentOf(decision)).toBe(idOf(cardSpan));
    expect(parentOf(wait)).toBe(idOf(cardSpan));
    expect(parentOf(resumed!)).toBe(idOf(decision));
    expect(parentOf(tool)).toBe(idOf(resumed!));
    expect(parentOf(answer)).toBe(idOf(resumed!));
    expect(modelCalls.map(parentOf)).toEqual([idOf(paused!), idOf(resumed!)]);

    expect(decision.attributes).toMatchObject({ 'countersign.decision.outcome': 'approved', 'countersign.decision.user': 'UBOB', 'countersign.tool': 'restart_service' });
    expect(resumed!.attributes).toMatchObject({ 'countersign.work.kind': 'resume' });
    expect(modelCalls[0]!.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(tool.status.code).not.toBe(2);
    // Prompts and outputs stay out of the spans: threads and tool output can hold secrets.
    expect(JSON.stringify(traces.spans().map((span) => span.attributes))).not.toContain('restart the worker');
  });
});
