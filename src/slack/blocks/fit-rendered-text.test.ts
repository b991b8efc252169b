import { describe, expect, it } from 'vitest';
import { untrustedTextToMrkdwn } from '../format/untrusted-text.js';
import { fitRenderedText } from './fit-rendered-text.js';

describe('fitRenderedText', () => {
  it('returns the whole rendering when it fits', () => {
    expect(fitRenderedText({ text: 'a < b', maxLength: 8, render: untrustedTextToMrkdwn })).toEqual({ text: 'a &lt; b', omittedCharacters: 0 });
  });

  it('fits the escaped text, not the source, and never leaves an entity half-written', () => {
    const result = fitRenderedText({ text: 'x<<<<<<<<', maxLength: 10, render: untrustedTextToMrkdwn });
    expect(result).toEqual({ text: 'x&lt;&lt;…', omittedCharacters: 6 });
  });

  it('keeps emoji whole', () => {
    expect(fitRenderedText({ text: '🚀🚀🚀', maxLength: 4, render: (text) => text }).text).toBe('🚀…');
  });
});
