import { describe, expect, it } from 'vitest';
import { pageUrl } from './page-url.js';

describe('the page URL the sandbox prints and links to', () => {
  it('is localhost for the default loopback address and for every interface', () => {
    for (const host of ['127.0.0.1', 'localhost', '0.0.0.0', '::', '']) expect(pageUrl({ host, port: 3000 })).toBe('http://localhost:3000');
  });

  it('names SANDBOX_HOST when the page listens only there, IPv6 in brackets', () => {
    expect(pageUrl({ host: '192.168.1.20', port: 3000 })).toBe('http://192.168.1.20:3000');
    expect(pageUrl({ host: 'devbox.lan', port: 8080 })).toBe('http://devbox.lan:8080');
    expect(pageUrl({ host: 'fd00::20', port: 3000 })).toBe('http://[fd00::20]:3000');
    expect(pageUrl({ host: '::1', port: 3000 })).toBe('http://[::1]:3000');
  });
});
