import { describe, expect, it } from 'vitest';
import { spawnCommand } from './run-command.js';

/**
 * A held command (the direct runner's, a stdio MCP server) gets its environment through /bin/sh,
 * which `exec`s it: the README says what that changes (see "Command tools and `spawn`"), and nothing
 * else may change. Handing it over otherwise would put it in argv, readable by anyone in /proc.
 */
describe.skipIf(process.platform !== 'linux')('held spawn: environment', () => {
  it('gives a held command the environment a command started outright gets, but for what the README says /bin/sh changes', async () => {
    const environment = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      API_URL: 'https://example.test/a=b',
      MULTI_LINE: 'one\ntwo',
      EMPTY: '',
      SPACED: '  a  b  ',
      _under: 'x',
      HOME: '/nowhere',
      'FOO-BAR': 'dropped',
      'app.mode': 'dropped',
      IFS: ',',
      OPTIND: '7',
      PPID: '42',
    };
    const run = (hold?: () => Promise<boolean>) =>
      spawnCommand({ argv: ['env', '-0'], timeoutMs: 10_000, outputLimit: 100_000, environment, ...(hold && { hold }) });
    const parse = (text: string) => Object.fromEntries(text.split('\0').filter((line) => line !== '' && !line.startsWith('PWD=')).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
    const outright = parse((await run()).stdout);
    const held = parse((await run(() => Promise.resolve(true))).stdout);

    expect(outright).toEqual(environment);
    const { 'FOO-BAR': _dropped, 'app.mode': _alsoDropped, ...identifiers } = environment;
    // The shell's own: IFS space, tab and newline; OPTIND 1; PPID its parent, the bot.
    expect(held).toEqual({ ...identifiers, IFS: ' \t\n', OPTIND: '1', PPID: String(process.pid) });
  });
});
