import { describe, expect, it } from 'vitest';
import { createBoundedOutput } from './bounded-output.js';

describe('createBoundedOutput', () => {
  it('keeps everything under the limit', () => {
    const output = createBoundedOutput(10);
    output.write('hello');
    output.write(Buffer.from(' you'));
    expect(output.finish()).toEqual({ text: 'hello you', truncated: false });
  });

  it('keeps the head and the tail and says how much was dropped', () => {
    const output = createBoundedOutput(10);
    for (let index = 0; index < 100; index += 1) output.write(String(index % 10));
    expect(output.finish()).toEqual({ text: '01234\n… [90 characters dropped] …\n56789', truncated: true });
  });

  it('does not mangle a multi-byte character split across chunks', () => {
    const output = createBoundedOutput(100);
    const bytes = Buffer.from('né');
    output.write(bytes.subarray(0, 2));
    output.write(bytes.subarray(2));
    expect(output.finish().text).toBe('né');
  });
});
