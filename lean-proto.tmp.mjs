import http from 'node:http';
import { fork } from 'node:child_process';
import { Readable } from 'node:stream';
import { request, Agent } from 'undici';
import { createOpenAI } from '@ai-sdk/openai';
import { streamText } from 'ai';
if (process.argv[2] === 'server') {
  const chunks = [
    { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] },
    ...['Done', '. The worker ', 'restarted ', 'fine.'].map((t) => ({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: t } }] })),
    { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } },
  ];
  const sse = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n';
  const s = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.end(sse); }); });
  s.keepAliveTimeout = 60000;
  s.listen(0, '127.0.0.1', () => process.send({ port: s.address().port }));
} else {
  const child = fork(new URL(import.meta.url).pathname, ['server']);
  const port = await new Promise((r) => child.once('message', (m) => r(m.port)));
  const dispatcher = new Agent({ connections: 64 });
  const lean = async (input, init) => {
    const r = await request(String(input), { method: init.method, headers: init.headers, body: init.body, signal: init.signal, dispatcher });
    const headers = new Headers();
    for (const [k, v] of Object.entries(r.headers)) if (Array.isArray(v)) for (const x of v) headers.append(k, x); else if (v !== undefined) headers.set(k, v);
    return new Response(Readable.toWeb(r.body), { status: r.statusCode, headers });
  };
  const models = { fetch: createOpenAI({ apiKey: 'k', baseURL: `http://127.0.0.1:${port}/v1` }).chat('m'), lean: createOpenAI({ apiKey: 'k', baseURL: `http://127.0.0.1:${port}/v1`, fetch: lean }).chat('m') };
  const N = 1500, C = 8;
  for (let rep = 0; rep < 4; rep++) for (const [name, model] of Object.entries(models)) {
    let i = 0; const start = process.cpuUsage(); const t0 = performance.now();
    await Promise.all(Array.from({ length: C }, async () => { while (i++ < N) { const r = streamText({ model, prompt: 'hi' }); let t=''; for await (const p of r.fullStream) if (p.type==='text-delta') t+=p.text; if (!t.startsWith('Done')) throw new Error(t); } }));
    const cpu = process.cpuUsage(start);
    console.log(rep, name.padEnd(8), 'cpu us/call', ((cpu.user + cpu.system) / N).toFixed(0), 'wall ms', (performance.now() - t0).toFixed(0));
  }
  child.kill();
}
