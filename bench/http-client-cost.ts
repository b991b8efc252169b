/**
 * The client half of bench/probes/http-client.probe.ts, run as its own process so its CPU is the
 * clients' alone (the fake Slack and model run in the probe's process). Alternates, round by round,
 * the same calls over Node's `fetch` and over the lean fetch the bot uses, and prints one JSON line
 * per round: { round, variant, kind, calls, cpuMicroseconds }.
 *   env: SLACK_URL, OPENAI_URL (the fakes), ROUNDS, CALLS (per round and kind), CONCURRENCY
 */
import { createOpenAI } from '@ai-sdk/openai';
import { WebClient } from '@slack/web-api';
import { streamText } from 'ai';
import { createLeanFetch } from '../dist/http/lean-fetch.js';
import { createObservedSlackFetch } from '../dist/slack/observed-slack-fetch.js';

const rounds = Number(process.env.ROUNDS ?? 6);
const calls = Number(process.env.CALLS ?? 1000);
const concurrency = Number(process.env.CONCURRENCY ?? 8);
const variants = { fetch: globalThis.fetch, lean: createLeanFetch() };

function clientsFor(fetch: typeof globalThis.fetch) {
  const slack = new WebClient('xoxb-bench', { slackApiUrl: process.env.SLACK_URL, retryConfig: { retries: 0 }, fetch: createObservedSlackFetch({ onFailure: () => {}, fetch }) });
  const model = createOpenAI({ apiKey: 'sk-bench', baseURL: process.env.OPENAI_URL, fetch }).responses('gpt-bench');
  return {
    slack: async () => {
      await slack.chat.postMessage({ channel: 'C0BENCH', thread_ts: '1700000000.000100', text: 'The worker in staging restarted.' });
    },
    model: async () => {
      const result = streamText({ model, prompt: 'restart the worker in staging' });
      for await (const part of result.fullStream) if (part.type === 'error') throw part.error;
    },
  };
}

const clients = { fetch: clientsFor(variants.fetch), lean: clientsFor(variants.lean) };
for (let round = 0; round < rounds; round += 1) {
  for (const kind of ['slack', 'model'] as const) {
    // Alternate which goes first, so neither always runs on a warmer machine.
    const order = round % 2 === 0 ? (['fetch', 'lean'] as const) : (['lean', 'fetch'] as const);
    for (const variant of order) {
      const call = clients[variant][kind];
      let next = 0;
      const before = process.cpuUsage();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < calls) {
            next += 1;
            await call();
          }
        }),
      );
      const used = process.cpuUsage(before);
      process.stdout.write(`${JSON.stringify({ round, variant, kind, calls, cpuMicroseconds: used.user + used.system })}\n`);
    }
  }
}
