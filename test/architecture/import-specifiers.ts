/**
 * The module specifiers a TypeScript file imports or re-exports: static imports (type-only too),
 * `export … from`, side-effect imports and dynamic `import('…')`. Comments are dropped first so a
 * commented-out import does not count; a string that merely looks like an import could, which only
 * makes the boundary checks stricter.
 */
export function importSpecifiers(source: string): string[] {
  const code = withoutComments(source);
  const found = new Set<string>();
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?[\w*{}\s,$]*?\s*from\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of code.matchAll(pattern)) found.add(match[1]!);
  return [...found];
}

/**
 * The specifiers a module loads when it is evaluated: static imports, re-exports and side-effect
 * imports; not `import type` / `export type`, not a dynamic `import()`, which loads on its own path.
 */
export function evaluatedSpecifiers(source: string): string[] {
  const code = withoutComments(source);
  const found = new Set<string>();
  for (const match of code.matchAll(/\b(?:import|export)\s+(type\s+)?[\w*{}\s,$]*?\s*from\s*['"]([^'"]+)['"]/g)) {
    if (match[1] === undefined) found.add(match[2]!);
  }
  for (const match of code.matchAll(/\bimport\s*['"]([^'"]+)['"]/g)) found.add(match[1]!);
  return [...found];
}

function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/(^|[^:\\'"`])\/\/.*$/gm, '$1');
}
