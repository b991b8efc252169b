import { describe, expect, it } from 'vitest';
import { createRedactor } from '../http/redact.js';
import { formatMcpResult } from './mcp-result.js';

const SECRET = 'mcp-secret-7f3a9c2e';
const redact = createRedactor([SECRET]);

function prefixesOf(secret: string, text: string): string[] {
  const found: string[] = [];
  for (let length = 4; length <= secret.length; length += 1) if (text.includes(secret.slice(0, length))) found.push(secret.slice(0, length));
  return found;
}

describe('formatMcpResult', () => {
  it('redacts before it cuts to the output limit: a secret across the limit never shows, not even in part', () => {
    const limit = 200;
    for (let inside = 0; inside <= SECRET.length; inside += 1) {
      const text = `${'x'.repeat(limit - inside)}${SECRET}${'y'.repeat(50)}`;
      for (const isError of [false, true]) {
        const { output } = formatMcpResult({ content: [{ type: 'text', text }], isError }, limit, redact);
        expect(prefixesOf(SECRET, output.text), `${inside} characters inside`).toEqual([]);
        expect(output.truncated).toBe(true);
      }
    }
  });

  it('redacts structured content (kept as an object when it stays valid JSON) and cut structured text', () => {
    const small = formatMcpResult({ content: [], structuredContent: { token: SECRET, n: 1 } }, 1000, redact);
    expect(small.output).toEqual({ text: '', truncated: false, structuredContent: { token: '[redacted]', n: 1 } });

    const big = formatMcpResult({ content: [], structuredContent: { pad: 'x'.repeat(90), token: SECRET } }, 110, redact);
    expect(big.output.truncated).toBe(true);
    expect(prefixesOf(SECRET, big.output.text)).toEqual([]);
  });
});
