import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory holding countersign's package.json, found from this module's own location, so
 * files read from the source tree (the sandbox page, the example config) are found both when run
 * from src/ (tests) and from dist/ (`npm start`).
 */
export function packageRoot(fromUrl: string = import.meta.url): string {
  let directory = dirname(fileURLToPath(fromUrl));
  for (;;) {
    if (existsSync(join(directory, 'package.json'))) return directory;
    const parent = dirname(directory);
    if (parent === directory) throw new Error(`no package.json above ${fileURLToPath(fromUrl)}`);
    directory = parent;
  }
}

export function sandboxSourcePath(...segments: string[]): string {
  return join(packageRoot(), 'src', 'sandbox', ...segments);
}
