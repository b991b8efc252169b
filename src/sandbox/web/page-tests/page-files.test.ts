import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** The page is served as-is (no build step): every file it asks for must be in public/. */
const publicDirectory = new URL('../public/', import.meta.url);
const file = (name: string) => new URL(name, publicDirectory);
const scripts = readdirSync(publicDirectory).filter((name) => name.endsWith('.js'));

describe('the page’s files', () => {
  it('index.html loads only files that are there, from /static/', () => {
    const html = readFileSync(file('index.html'), 'utf8');
    const references = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(references).toContain('/static/main.js');
    for (const reference of references) {
      expect(reference).toMatch(/^\/static\//);
      expect(existsSync(file(reference.slice('/static/'.length))), reference).toBe(true);
    }
  });

  it('every module imports only sibling modules that exist (a browser cannot resolve packages)', () => {
    for (const name of scripts) {
      const source = readFileSync(file(name), 'utf8');
      for (const [, specifier] of source.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gm)) {
        expect(specifier, `${name} imports ${specifier}`).toMatch(/^\.\/[\w-]+\.js$/);
        expect(existsSync(file(specifier!)), `${name} imports ${specifier}`).toBe(true);
      }
    }
  });

  it('no module evaluates strings as code or writes HTML other than through the renderer', () => {
    for (const name of scripts) {
      const source = readFileSync(file(name), 'utf8');
      expect(source, name).not.toMatch(/\beval\(|new Function\(|insertAdjacentHTML|document\.write|outerHTML\s*=|innerHTML\s*\+=/);
    }
  });
});
