/**
 * Slack's Block Kit size limits, a truncation helper that respects them, and a checker that finds
 * every limit a payload breaks. Slack rejects a whole message (`invalid_blocks`,
 * `msg_blocks_too_long`) for one over-long string, so builders fit text first and tests check.
 *
 * Lengths are UTF-16 code units (`string.length`). Slack counts characters; code units are never
 * fewer, so staying under a limit in code units stays under it in characters.
 */
export const SLACK_LIMITS = {
  blocksPerMessage: 50,
  blocksPerModal: 100,
  textObjectLength: 3000,
  sectionTextLength: 3000,
  sectionFieldCount: 10,
  sectionFieldLength: 2000,
  headerTextLength: 150,
  contextElementCount: 10,
  actionsElementCount: 25,
  buttonTextLength: 75,
  buttonValueLength: 2000,
  buttonUrlLength: 3000,
  buttonAccessibilityLabelLength: 75,
  actionIdLength: 255,
  blockIdLength: 255,
  callbackIdLength: 255,
  modalTitleLength: 24,
  modalSubmitLength: 24,
  modalCloseLength: 24,
  privateMetadataLength: 3000,
  optionTextLength: 75,
  /** docs.slack.dev now says 150, but `@slack/types` and older docs say 75: stay under both. */
  optionValueLength: 75,
  optionsPerSelect: 100,
  optionsPerCheckboxGroup: 10,
  optionsPerOverflow: 5,
  plainTextInputMaxLength: 3000,
  placeholderLength: 150,
  labelLength: 2000,
  hintLength: 2000,
  imageAltTextLength: 2000,
  confirmTitleLength: 100,
  confirmTextLength: 300,
  confirmButtonLength: 30,
  /** Slack truncates message `text` above this. */
  messageTextHardLength: 40_000,
  /** Slack renders `text` best under 4,000; the answer splitter aims a little lower. */
  messageTextLength: 3900,
  /**
   * Undocumented cap on all text inside one message's blocks (`msg_blocks_too_long` at ~12–13k,
   * bolt-js #2509). The same number caps cumulative `markdown` block text.
   */
  messageBlocksTextLength: 12_000,
} as const;

export type BlockSurface = 'message' | 'modal';

/**
 * Cuts `text` to at most `maxLength` code units, ending with `ellipsis` when it had to cut.
 * Never leaves half of a surrogate pair, which Slack would render as a replacement character.
 */
export function truncateText(text: string, maxLength: number, { ellipsis = '…' }: { ellipsis?: string } = {}): string {
  if (text.length <= maxLength) return text;
  if (ellipsis.length >= maxLength) return sliceWholeCharacters(ellipsis, Math.max(0, maxLength));
  return sliceWholeCharacters(text, maxLength - ellipsis.length).trimEnd() + ellipsis;
}

/** `text.slice(0, end)`, moved back by one when `end` would split a surrogate pair. */
export function sliceWholeCharacters(text: string, end: number): string {
  const last = text.charCodeAt(end - 1);
  const splitsPair = end > 0 && end < text.length && last >= 0xd800 && last <= 0xdbff;
  return text.slice(0, splitsPair ? end - 1 : end);
}

/**
 * Sums every string `text` property inside the blocks: what Slack counts towards
 * `messageBlocksTextLength` (text objects, markdown blocks, rich-text runs).
 */
export function measureBlockText(blocks: readonly unknown[]): number {
  let total = 0;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else if (isRecord(value)) {
      for (const [key, child] of Object.entries(value)) {
        if (key === 'text' && typeof child === 'string') total += child.length;
        else visit(child);
      }
    }
  };
  visit(blocks);
  return total;
}

/**
 * Lists every Block Kit limit the blocks break, as `"<path>: <problem>"` with JSON-pointer paths
 * such as `/blocks/3/elements/0/value`. Empty means Slack should accept the sizes; structure
 * beyond what is checked here is left to `@slack/types`.
 */
export function findBlockKitViolations(blocks: readonly unknown[], { surface }: { surface: BlockSurface }): string[] {
  const violations: string[] = [];
  const checker = new ViolationChecker(violations);
  const maxBlocks = surface === 'modal' ? SLACK_LIMITS.blocksPerModal : SLACK_LIMITS.blocksPerMessage;
  if (blocks.length > maxBlocks) violations.push(`/blocks: ${blocks.length} blocks (max ${maxBlocks} in a ${surface})`);
  for (const [index, block] of blocks.entries()) checker.block(block, `/blocks/${index}`);
  if (surface === 'message') {
    const total = measureBlockText(blocks);
    if (total > SLACK_LIMITS.messageBlocksTextLength) {
      violations.push(`/blocks: ${total} characters of text in one message (max ${SLACK_LIMITS.messageBlocksTextLength})`);
    }
  }
  return violations;
}

const TEXT_TYPES = new Set(['plain_text', 'mrkdwn']);

class ViolationChecker {
  private readonly blockIds = new Set<string>();
  private markdownLength = 0;

  constructor(private readonly violations: string[]) {}

  block(block: unknown, path: string): void {
    if (!isRecord(block)) return this.report(path, 'block is not an object');
    if (block.block_id !== undefined) this.identifier(block.block_id, `${path}/block_id`, SLACK_LIMITS.blockIdLength, this.blockIds);
    switch (block.type) {
      case 'header':
        return this.text(block.text, `${path}/text`, SLACK_LIMITS.headerTextLength, { plainOnly: true });
      case 'section':
        if (block.text === undefined && block.fields === undefined) this.report(path, 'section needs text or fields');
        if (block.text !== undefined) this.text(block.text, `${path}/text`, SLACK_LIMITS.sectionTextLength);
        if (block.fields !== undefined) {
          this.list(block.fields, `${path}/fields`, SLACK_LIMITS.sectionFieldCount, (field, fieldPath) =>
            this.text(field, fieldPath, SLACK_LIMITS.sectionFieldLength),
          );
        }
        if (block.accessory !== undefined) this.element(block.accessory, `${path}/accessory`);
        return;
      case 'context':
        return this.list(block.elements, `${path}/elements`, SLACK_LIMITS.contextElementCount, (element, elementPath) =>
          isRecord(element) && TEXT_TYPES.has(String(element.type))
            ? this.text(element, elementPath, SLACK_LIMITS.textObjectLength)
            : this.element(element, elementPath),
        );
      case 'actions':
        return this.list(block.elements, `${path}/elements`, SLACK_LIMITS.actionsElementCount, (element, elementPath) =>
          this.element(element, elementPath),
        );
      case 'input':
        this.text(block.label, `${path}/label`, SLACK_LIMITS.labelLength, { plainOnly: true });
        if (block.hint !== undefined) this.text(block.hint, `${path}/hint`, SLACK_LIMITS.hintLength, { plainOnly: true });
        return this.element(block.element, `${path}/element`);
      case 'image':
        this.string(block.alt_text, `${path}/alt_text`, SLACK_LIMITS.imageAltTextLength);
        if (block.title !== undefined) this.text(block.title, `${path}/title`, SLACK_LIMITS.imageAltTextLength, { plainOnly: true });
        return;
      case 'markdown':
        // The cap is cumulative across every markdown block in the message.
        this.markdownLength += typeof block.text === 'string' ? block.text.length : 0;
        if (this.markdownLength > SLACK_LIMITS.messageBlocksTextLength) {
          this.report(`${path}/text`, `markdown blocks total ${this.markdownLength} characters (max ${SLACK_LIMITS.messageBlocksTextLength})`);
        }
        return;
      default:
        return;
    }
  }

  private element(element: unknown, path: string): void {
    if (!isRecord(element)) return this.report(path, 'element is not an object');
    if (element.action_id !== undefined) this.identifier(element.action_id, `${path}/action_id`, SLACK_LIMITS.actionIdLength);
    if (element.placeholder !== undefined) {
      this.text(element.placeholder, `${path}/placeholder`, SLACK_LIMITS.placeholderLength, { plainOnly: true });
    }
    if (element.confirm !== undefined) this.confirm(element.confirm, `${path}/confirm`);
    if (element.type === 'image') this.string(element.alt_text, `${path}/alt_text`, SLACK_LIMITS.imageAltTextLength);
    if (element.type === 'button') {
      this.text(element.text, `${path}/text`, SLACK_LIMITS.buttonTextLength, { plainOnly: true });
      if (element.value !== undefined) this.string(element.value, `${path}/value`, SLACK_LIMITS.buttonValueLength);
      if (element.url !== undefined) this.string(element.url, `${path}/url`, SLACK_LIMITS.buttonUrlLength);
      if (element.accessibility_label !== undefined) {
        this.string(element.accessibility_label, `${path}/accessibility_label`, SLACK_LIMITS.buttonAccessibilityLabelLength);
      }
      if (element.style !== undefined && element.style !== 'primary' && element.style !== 'danger') {
        this.report(`${path}/style`, `style must be "primary" or "danger"`);
      }
    }
    if (element.type === 'plain_text_input') {
      for (const key of ['min_length', 'max_length'] as const) {
        const value = element[key];
        if (value !== undefined && (typeof value !== 'number' || value < 0 || value > SLACK_LIMITS.plainTextInputMaxLength)) {
          this.report(`${path}/${key}`, `${key} must be 0–${SLACK_LIMITS.plainTextInputMaxLength}`);
        }
      }
    }
    const maxOptions =
      element.type === 'checkboxes' || element.type === 'radio_buttons'
        ? SLACK_LIMITS.optionsPerCheckboxGroup
        : element.type === 'overflow'
          ? SLACK_LIMITS.optionsPerOverflow
          : SLACK_LIMITS.optionsPerSelect;
    if (element.options !== undefined) {
      this.list(element.options, `${path}/options`, maxOptions, (option, optionPath) => this.option(option, optionPath));
    }
    if (element.option_groups !== undefined) {
      this.list(element.option_groups, `${path}/option_groups`, SLACK_LIMITS.optionsPerSelect, (group, groupPath) => {
        if (!isRecord(group)) return this.report(groupPath, 'option group is not an object');
        this.text(group.label, `${groupPath}/label`, SLACK_LIMITS.optionTextLength, { plainOnly: true });
        this.list(group.options, `${groupPath}/options`, SLACK_LIMITS.optionsPerSelect, (option, optionPath) =>
          this.option(option, optionPath),
        );
      });
    }
  }

  private option(option: unknown, path: string): void {
    if (!isRecord(option)) return this.report(path, 'option is not an object');
    this.text(option.text, `${path}/text`, SLACK_LIMITS.optionTextLength);
    this.string(option.value, `${path}/value`, SLACK_LIMITS.optionValueLength);
    if (option.description !== undefined) this.text(option.description, `${path}/description`, SLACK_LIMITS.optionTextLength);
  }

  private confirm(confirm: unknown, path: string): void {
    if (!isRecord(confirm)) return this.report(path, 'confirm is not an object');
    this.text(confirm.title, `${path}/title`, SLACK_LIMITS.confirmTitleLength, { plainOnly: true });
    this.text(confirm.text, `${path}/text`, SLACK_LIMITS.confirmTextLength);
    this.text(confirm.confirm, `${path}/confirm`, SLACK_LIMITS.confirmButtonLength, { plainOnly: true });
    this.text(confirm.deny, `${path}/deny`, SLACK_LIMITS.confirmButtonLength, { plainOnly: true });
  }

  private text(value: unknown, path: string, maxLength: number, { plainOnly = false } = {}): void {
    if (!isRecord(value) || !TEXT_TYPES.has(String(value.type))) return this.report(path, 'not a text object');
    if (plainOnly && value.type !== 'plain_text') this.report(`${path}/type`, 'must be plain_text');
    if (typeof value.text !== 'string' || value.text.length === 0) return this.report(`${path}/text`, 'text is empty');
    this.string(value.text, `${path}/text`, maxLength);
  }

  private string(value: unknown, path: string, maxLength: number): void {
    if (typeof value !== 'string') return this.report(path, 'not a string');
    if (value.length > maxLength) this.report(path, `${value.length} characters (max ${maxLength})`);
  }

  private identifier(value: unknown, path: string, maxLength: number, seen?: Set<string>): void {
    this.string(value, path, maxLength);
    if (typeof value !== 'string' || seen === undefined) return;
    if (seen.has(value)) this.report(path, `duplicate block_id "${value}"`);
    seen.add(value);
  }

  private list(value: unknown, path: string, maxItems: number, checkItem: (item: unknown, itemPath: string) => void): void {
    if (!Array.isArray(value) || value.length === 0) return this.report(path, 'must be a non-empty array');
    if (value.length > maxItems) this.report(path, `${value.length} items (max ${maxItems})`);
    for (const [index, item] of value.entries()) checkItem(item, `${path}/${index}`);
  }

  private report(path: string, problem: string): void {
    this.violations.push(`${path}: ${problem}`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
