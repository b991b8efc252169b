import { expect } from 'vitest';

interface Node {
  tagName: string;
  attributes: ArrayLike<{ name: string; value: string }>;
}

/**
 * What rendered HTML may hold, whatever the bot sent: no scripts, frames or event handlers, and
 * only http(s) in links and images.
 */
export function expectInert(container: { querySelectorAll(selector: string): ArrayLike<unknown> }): void {
  const elements = Array.from(container.querySelectorAll('*')) as Node[];
  for (const element of elements) {
    expect(['SCRIPT', 'IFRAME', 'OBJECT', 'EMBED', 'STYLE', 'LINK', 'META', 'BASE']).not.toContain(element.tagName);
    for (const { name, value } of Array.from(element.attributes)) {
      expect(name.toLowerCase(), `${element.tagName} ${name}`).not.toMatch(/^on/);
      if (['href', 'src', 'action', 'formaction', 'xlink:href'].includes(name.toLowerCase())) expect(value).toMatch(/^https?:\/\//);
    }
  }
}
