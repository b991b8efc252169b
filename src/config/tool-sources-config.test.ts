import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { problemsOf } from './config-problems.test-support.js';
import { parseConfigFile } from './config-file.js';


describe('http:', () => {
  it('applies defaults and normalises base URLs to end with a slash', () => {
    const { http } = parseConfigFile(
      `
http:
  bases:
    - url: https://api.github.com
      description: GitHub REST API
      headers: { Authorization: "Bearer \${GITHUB_TOKEN}", Accept: application/vnd.github+json }
    - url: https://status.example.com/v1/
`,
      'countersign.yml',
    );
    expect(http).toEqual({
      bases: [
        { url: 'https://api.github.com/', description: 'GitHub REST API', headers: { Authorization: 'Bearer ${GITHUB_TOKEN}', Accept: 'application/vnd.github+json' } },
        { url: 'https://status.example.com/v1/', headers: {} },
      ],
      timeoutSeconds: 30,
      maxResponseBytes: 1_048_576,
      bodyLimit: 8000,
    });
  });

  it('is absent unless configured', () => {
    expect(parseConfigFile('', 'countersign.yml')).not.toHaveProperty('http');
    expect(parseConfigFile('', 'countersign.yml')).not.toHaveProperty('mcpServers');
  });

  it('reports bad bases and headers with their path', () => {
    expect(
      problemsOf(`
http:
  bases:
    - url: ftp://files.example.com/
    - url: https://user:pw@api.example.com/
    - url: https://api.example.com/?page=1
    - url: https://ok.example.com/
      headers:
        Authorization: Bearer ghp_literal_token
        X-Api-Key: "\${}"
        Host: evil.example.com
    - url: https://ok.example.com
  timeoutSecond: 5
`),
    ).toEqual([
      { field: 'countersign.yml http.bases[0].url', message: 'must be an http:// or https:// URL' },
      { field: 'countersign.yml http.bases[1].url', message: 'must not contain credentials; use headers with ${VAR} instead' },
      { field: 'countersign.yml http.bases[2].url', message: 'must not have a query or fragment' },
      { field: 'countersign.yml http.bases[3].headers["X-Api-Key"]', message: 'has a ${…} whose text is not a valid environment variable name (letters, digits and _, not starting with a digit; $${ for a literal ${)' },
      {
        field: 'countersign.yml http.bases[3].headers.Authorization',
        message: 'looks like a credential: put the secret in an environment variable and write it as ${VAR_NAME}, e.g. "Bearer ${API_TOKEN}"',
      },
      { field: 'countersign.yml http.bases[3].headers.Host', message: 'is set by the bot and cannot be configured' },
      { field: 'countersign.yml http.timeoutSecond', message: 'is not a known setting (did you mean timeoutSeconds?)' },
    ]);
    expect(problemsOf('http:\n  bases: [{ url: "https://a.example/" }, { url: "https://a.example" }]')).toEqual([
      { field: 'countersign.yml http.bases[1].url', message: 'duplicates bases[0]' },
    ]);
    expect(problemsOf('http:\n  bases: []')).toEqual([{ field: 'countersign.yml http.bases', message: 'must list at least one base URL' }]);
  });

  it('names a malformed ${…} without printing the token an operator pasted between the braces', () => {
    const token = 'sk-live-4f9aQ7c2SECRET';
    const problems = problemsOf(`http:
  bases:
    - url: https://api.example.com/
      headers:
        Authorization: "Bearer \${${token}}"
`);
    expect(problems.map((problem) => problem.field)).toEqual(['countersign.yml http.bases[0].headers.Authorization']);
    expect(JSON.stringify(problems)).not.toContain(token);
  });
});

describe('mcpServers:', () => {
  it('reads stdio and Streamable HTTP servers with their defaults', () => {
    const { mcpServers } = parseConfigFile(
      `
mcpServers:
  fs:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/runbooks"]
    env: { LOG_LEVEL: debug, RETRIES: 3, TOKEN: "\${FS_TOKEN}" }
    exclude: [move_file]
  github:
    url: https://api.githubcopilot.com/mcp/
    headers: { Authorization: "Bearer \${GITHUB_TOKEN}" }
    trustReadOnlyHint: true
    include: ["get_*", "list_*"]
`,
      'countersign.yml',
    );
    expect(mcpServers).toEqual({
      fs: {
        transport: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv/runbooks'],
        env: { LOG_LEVEL: 'debug', RETRIES: '3', TOKEN: '${FS_TOKEN}' },
        timeoutSeconds: 60,
        connectTimeoutSeconds: 20,
        outputLimit: 8000,
        trustReadOnlyHint: false,
        exclude: ['move_file'],
      },
      github: {
        transport: 'http',
        url: 'https://api.githubcopilot.com/mcp/',
        headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' },
        timeoutSeconds: 60,
        connectTimeoutSeconds: 20,
        outputLimit: 8000,
        trustReadOnlyHint: true,
        include: ['get_*', 'list_*'],
        exclude: [],
      },
    });
  });

  it('reports mixed-up, missing and unknown settings with their path', () => {
    expect(
      problemsOf(`
mcpServers:
  k8s.prod: { command: kubectl-mcp }
  both: { command: server, url: "https://x.example/mcp" }
  neither: { args: [x] }
  httpWithEnv: { url: "https://x.example/mcp", env: { A: b } }
  stdioWithHeaders: { command: server, headers: { X-Trace: "1" } }
  badUrl: { url: "mcp.example.com" }
  typo: { comand: server }
`),
    ).toEqual([
      {
        field: 'countersign.yml mcpServers["k8s.prod"]',
        message: 'is not a valid server name (letters, digits, _ and -, starting with a letter, at most 32; no dots, they separate server and tool)',
      },
      { field: 'countersign.yml mcpServers.both.url', message: 'give either command (stdio) or url (Streamable HTTP), not both' },
      { field: 'countersign.yml mcpServers.neither.command', message: 'is required (or url, for a Streamable HTTP server)' },
      { field: 'countersign.yml mcpServers.httpWithEnv.env', message: 'only applies to command (stdio) servers' },
      { field: 'countersign.yml mcpServers.stdioWithHeaders.headers', message: 'only applies to url servers; stdio servers take env' },
      { field: 'countersign.yml mcpServers.badUrl.url', message: 'must be an absolute http:// or https:// URL' },
      { field: 'countersign.yml mcpServers.typo.comand', message: 'is not a known setting (did you mean command?)' },
      { field: 'countersign.yml mcpServers.typo.command', message: 'is required (or url, for a Streamable HTTP server)' },
    ]);
  });

  it('refuses ${VAR} where it is not expanded (command, args, cwd, url): the server would get the text, not the secret', () => {
    const throughEnv = 'has ${…}, which is not expanded here; pass it through env: and have the server read it (write $${ for a literal ${)';
    expect(
      problemsOf(`
mcpServers:
  gh:
    command: npx
    args: ["--token", "\${GH_TOKEN}"]
    cwd: "/srv/\${TEAM}"
  remote: { url: "https://mcp.example.com/\${API_KEY}/" }
`),
    ).toEqual([
      { field: 'countersign.yml mcpServers.gh.args[1]', message: throughEnv },
      { field: 'countersign.yml mcpServers.gh.cwd', message: throughEnv },
      {
        field: 'countersign.yml mcpServers.remote.url',
        message: 'has ${…}, which is not expanded here; put the secret in headers:, where ${VAR} is filled (write $${ for a literal ${)',
      },
    ]);
  });

  it('passes $${ in args as a literal ${, as in env and headers', () => {
    const { mcpServers } = parseConfigFile('mcpServers:\n  sh: { command: sh, args: ["-c", "echo $${HOME}"] }\n', 'countersign.yml');
    expect(mcpServers?.sh).toMatchObject({ transport: 'stdio', args: ['-c', 'echo ${HOME}'] });
  });
});

describe('countersign.example.yml', () => {
  it('has http and mcpServers examples that parse once uncommented', async () => {
    const text = await readFile(new URL('../../countersign.example.yml', import.meta.url), 'utf8');
    const block = (marker: string) => {
      const start = text.indexOf(`\n# ${marker}:\n`);
      expect(start).toBeGreaterThan(0);
      const end = text.indexOf('\n\n', start + 1);
      return text
        .slice(start + 1, end)
        .split('\n')
        .map((line) => line.replace(/^# ?/, ''))
        .join('\n');
    };
    const config = parseConfigFile(`${block('http')}\n${block('mcpServers')}`, 'countersign.example.yml');
    expect(config.http?.bases.length).toBeGreaterThan(0);
    expect(Object.keys(config.mcpServers ?? {})).toEqual(['runbooks', 'github']);
  });
});
