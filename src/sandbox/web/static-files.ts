import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/** Serves one file below `root`; a path that climbs out of it is not found, like a missing file. */
export async function serveStaticFile(options: { root: string; path: string; response: ServerResponse }): Promise<void> {
  const { root, response } = options;
  const relative = normalize(decodeURIComponent(options.path)).replace(/^([/\\])+/, '');
  const file = join(root, relative);
  if (relative.startsWith('..') || !(file === root || file.startsWith(`${root}${sep}`))) return notFound(response);
  let content: Buffer;
  try {
    content = await readFile(file);
  } catch {
    return notFound(response);
  }
  response.writeHead(200, {
    'content-type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'content-length': content.length,
    // The page is edited in place during development; a stale cached script would be confusing.
    'cache-control': 'no-cache',
  });
  response.end(content);
}

function notFound(response: ServerResponse): void {
  response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
  response.end('not found');
}
