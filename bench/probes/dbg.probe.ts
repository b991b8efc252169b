import { it } from 'vitest';
import { streamText } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { startFakeOpenAI } from '../../test/helpers/fake-openai.js';
import { createLeanFetch } from '../../src/http/lean-fetch.js';
import { createTurnTelemetry } from '../../src/agent/turn-telemetry.js';
it('dbg', async () => {
  const openai = await startFakeOpenAI();
  openai.setResponder(() => ({ text: 'Done.' }));
  const model = createOpenAI({ apiKey: 'k', baseURL: openai.baseURL, fetch: createLeanFetch() }).responses('m');
  const variants: Record<string, () => object> = {
    telemetry: () => ({ telemetry: createTurnTelemetry({}).options }),
    none: () => ({ telemetry: { isEnabled: false } }),
    default: () => ({}),
  };
  for (let round = 0; round < 6; round++) for (const [name, extra] of Object.entries(variants)) {
    const before = process.cpuUsage(); let i = 0;
    await Promise.all(Array.from({ length: 8 }, async () => { while (i++ < 800) { const r = streamText({ model, prompt: 'hi', ...extra() }); for await (const p of r.fullStream) if (p.type === 'error') throw p.error; } }));
    const u = process.cpuUsage(before); if (round > 0) console.log(name, Math.round((u.user + u.system) / 800));
  }
  openai.requests.length = 0;
  await openai.close();
});
