import { describe, expect, it } from 'vitest';
import { ownHosts, refuseForeignRequest } from './own-page-requests.js';

describe('which requests count as the sandbox page’s own', () => {
  const loopback = ownHosts({ port: 3000 });
  const refusal = (headers: Record<string, string>, hosts = loopback) => refuseForeignRequest({ headers, ownHosts: hosts })?.status;

  it('answers the page under each loopback name, with its Origin or without one', () => {
    for (const host of ['127.0.0.1:3000', 'localhost:3000', '[::1]:3000', 'LocalHost:3000']) {
      expect(refusal({ host })).toBeUndefined();
      expect(refusal({ host, origin: `http://${host.toLowerCase()}` })).toBeUndefined();
    }
  });

  it('refuses a rebound name, another port, or no Host at all (421)', () => {
    expect(refusal({ host: 'rebind.evil.example:3000' })).toBe(421);
    expect(refusal({ host: 'localhost:8080' })).toBe(421);
    expect(refusal({ host: 'localhost' })).toBe(421);
    expect(refusal({})).toBe(421);
  });

  it('refuses an Origin that is not the page’s own (403): another site, another local port, https, a sandboxed frame', () => {
    for (const origin of ['https://evil.example', 'http://localhost:8080', 'https://localhost:3000', 'http://127.0.0.1:3000', 'null']) {
      expect(refusal({ host: 'localhost:3000', origin })).toBe(403);
    }
  });

  it('adds SANDBOX_HOST unless it binds every interface; port 80 goes without a port', () => {
    expect(refusal({ host: '192.168.1.20:3000' }, ownHosts({ port: 3000, configuredHost: '192.168.1.20' }))).toBeUndefined();
    expect(refusal({ host: '[fd00::20]:3000' }, ownHosts({ port: 3000, configuredHost: 'fd00::20' }))).toBeUndefined();
    expect([...ownHosts({ port: 3000, configuredHost: '0.0.0.0' })]).toEqual(['127.0.0.1:3000', 'localhost:3000', '[::1]:3000']);
    expect(refusal({ host: 'localhost' }, ownHosts({ port: 80 }))).toBeUndefined();
  });
});
