/**
 * The Block Kit limits Slack enforces server-side, so a card that would be rejected in
 * production is rejected by the emulator too. Messages are phrased like Slack's own `errors`
 * entries ("must be less than 3001 characters [json-pointer:/blocks/0/text/text]").
 */
export const MESSAGE_BLOCKS_MAX = 50;
export const VIEW_BLOCKS_MAX = 100;
const TEXT_OBJECT_MAX_CHARACTERS = 3000;
const HEADER_TEXT_MAX_CHARACTERS = 150;
const BUTTON_TEXT_MAX_CHARACTERS = 75;
const BUTTON_VALUE_MAX_CHARACTERS = 2000;
/**
 * All the text in one message's blocks: above it Slack refuses the message whole with
 * `msg_blocks_too_long` (not documented; seen from about 12,000 characters, so the low end).
 */
export const MESSAGE_BLOCKS_TEXT_MAX = 12_000;

export function blockKitProblems(options: { blocks: unknown; maxBlocks: number; pointer?: string }): string[] {
  const pointer = options.pointer ?? '/blocks';
  if (!Array.isArray(options.blocks)) {
    return [`must be an array [json-pointer:${pointer}]`];
  }
  const problems: string[] = [];
  if (options.blocks.length > options.maxBlocks) {
    problems.push(`no more than ${options.maxBlocks} items allowed [json-pointer:${pointer}]`);
  }
  visit({ node: options.blocks, pointer, problems });
  return problems;
}

function visit(options: { node: unknown; pointer: string; problems: string[] }): void {
  const { node, pointer, problems } = options;
  if (Array.isArray(node)) {
    for (const [index, child] of node.entries()) visit({ node: child, pointer: `${pointer}/${index}`, problems });
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const element = node as Record<string, unknown>;
  checkTextObject({ element, pointer, problems });
  if (element.type === 'header') {
    checkLength({ value: textOf(element.text), max: HEADER_TEXT_MAX_CHARACTERS, pointer: `${pointer}/text/text`, problems });
  }
  if (element.type === 'button') {
    checkLength({ value: textOf(element.text), max: BUTTON_TEXT_MAX_CHARACTERS, pointer: `${pointer}/text/text`, problems });
    checkLength({ value: element.value, max: BUTTON_VALUE_MAX_CHARACTERS, pointer: `${pointer}/value`, problems });
  }
  for (const [key, child] of Object.entries(element)) {
    visit({ node: child, pointer: `${pointer}/${key}`, problems });
  }
}

function checkTextObject(options: { element: Record<string, unknown>; pointer: string; problems: string[] }): void {
  const { element, pointer, problems } = options;
  if ((element.type !== 'plain_text' && element.type !== 'mrkdwn') || typeof element.text !== 'string') return;
  if (element.text.length === 0) {
    problems.push(`must be more than 0 characters [json-pointer:${pointer}/text]`);
  }
  checkLength({ value: element.text, max: TEXT_OBJECT_MAX_CHARACTERS, pointer: `${pointer}/text`, problems });
}

function checkLength(options: { value: unknown; max: number; pointer: string; problems: string[] }): void {
  if (typeof options.value === 'string' && options.value.length > options.max) {
    options.problems.push(`must be less than ${options.max + 1} characters [json-pointer:${options.pointer}]`);
  }
}

function textOf(textObject: unknown): unknown {
  return typeof textObject === 'object' && textObject !== null ? (textObject as { text?: unknown }).text : undefined;
}

/** The characters of text in `blocks` as Slack totals them for `msg_blocks_too_long`: every `text` string. */
export function blocksTextLength(blocks: unknown): number {
  if (Array.isArray(blocks)) return blocks.reduce((total: number, child) => total + blocksTextLength(child), 0);
  if (typeof blocks !== 'object' || blocks === null) return 0;
  let total = 0;
  for (const [key, child] of Object.entries(blocks)) total += key === 'text' && typeof child === 'string' ? child.length : blocksTextLength(child);
  return total;
}
