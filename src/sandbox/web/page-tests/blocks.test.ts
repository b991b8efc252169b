import { afterAll, describe, expect, it } from 'vitest';
import { expectInert } from './inert.test-support.js';
import { blockKit, newWindow, parse, WORKSPACE_CONTEXT } from './page-modules.test-support.js';

const window = newWindow();
afterAll(() => window.happyDOM.close());

const render = (blocks: unknown[]) => parse(window, blockKit.renderBlocks(blocks, WORKSPACE_CONTEXT));
const plain = (text: string) => ({ type: 'plain_text', text, emoji: true });
const mrkdwn = (text: string) => ({ type: 'mrkdwn', text });
const option = (text: string, value: string) => ({ text: plain(text), value });

describe('blocks', () => {
  it('section: mrkdwn text, fields in two columns, and a button accessory', () => {
    const node = render([
      { type: 'section', block_id: 's1', text: mrkdwn('*Deploy* to <@U0BOB>'), fields: [mrkdwn('*Env*\nstaging'), plain('Replicas: 3')], accessory: { type: 'button', action_id: 'go', text: plain('Go'), value: 'v' } },
    ]);
    const block = node.querySelector('.bk-block-section')!;
    expect(block.getAttribute('data-block-id')).toBe('s1');
    expect(block.querySelector('.bk-section-text')!.innerHTML).toBe('<strong>Deploy</strong> to <span class="mk-mention">@bob</span>');
    expect(Array.from(block.querySelectorAll('.bk-field')).map((field) => field.textContent)).toEqual(['Envstaging', 'Replicas: 3']);
    const button = block.querySelector('.bk-accessory button')!;
    expect([button.textContent, button.getAttribute('data-bi'), button.getAttribute('data-ei')]).toEqual(['Go', '0', 'accessory']);
  });

  it('section accessories: overflow menu and image', () => {
    const node = render([
      { type: 'section', text: plain('a'), accessory: { type: 'overflow', action_id: 'more', options: [option('Retry', 'r'), option('Cancel', 'c')] } },
      { type: 'section', text: plain('b'), accessory: { type: 'image', image_url: 'https://img.example/a.png', alt_text: 'graph' } },
    ]);
    expect(Array.from(node.querySelectorAll('[data-kind="overflow"]')).map((item) => [item.textContent, item.getAttribute('data-option')])).toEqual([
      ['Retry', '0'],
      ['Cancel', '1'],
    ]);
    const image = node.querySelector('.bk-accessory img')!;
    expect([image.getAttribute('src'), image.getAttribute('alt')]).toEqual(['https://img.example/a.png', 'graph']);
  });

  it('context: text and image elements', () => {
    const node = render([{ type: 'context', elements: [mrkdwn('_by_ <@U0ALICE>'), { type: 'image', image_url: 'https://img.example/i.png', alt_text: 'icon' }, plain('plain :lock:')] }]);
    expect(node.querySelector('.bk-block-context')!.textContent).toBe('by @aliceplain 🔒');
    expect(node.querySelector('.bk-block-context img')!.getAttribute('alt')).toBe('icon');
  });

  it('divider, header and image blocks', () => {
    const node = render([{ type: 'header', text: plain(':lock: Approval needed') }, { type: 'divider' }, { type: 'image', image_url: 'https://img.example/p.png', alt_text: 'chart', title: plain('Load') }]);
    expect(node.querySelector('.bk-header-text')!.textContent).toBe('🔒 Approval needed');
    expect(node.querySelector('hr.bk-rule')).not.toBeNull();
    expect(node.querySelector('.bk-image-title')!.textContent).toBe('Load');
    expect(node.querySelector('img.bk-image')!.getAttribute('src')).toBe('https://img.example/p.png');
  });

  it('actions: buttons keep their style, confirm, url and accessibility label', () => {
    const node = render([
      {
        type: 'actions',
        block_id: 'a1',
        elements: [
          { type: 'button', action_id: 'ok', style: 'primary', text: plain('Approve'), value: 'x', accessibility_label: 'Approve restart' },
          { type: 'button', action_id: 'no', style: 'danger', text: plain('Deny'), confirm: { title: plain('Sure?'), text: mrkdwn('Really'), confirm: plain('Yes'), deny: plain('No') } },
          { type: 'button', action_id: 'docs', text: plain('Docs'), url: 'https://docs.example/' },
          { type: 'static_select', action_id: 'pick', options: [option('one', '1'), option('two', '2')], initial_option: option('two', '2') },
        ],
      },
    ]);
    const buttons = Array.from(node.querySelectorAll('button'));
    expect(buttons.map((button) => button.className)).toEqual(['bk-btn bk-btn-primary', 'bk-btn bk-btn-danger', 'bk-btn']);
    expect(buttons[0]!.getAttribute('aria-label')).toBe('Approve restart');
    expect(buttons[1]!.getAttribute('data-confirm')).toBe('true');
    expect(buttons[2]!.getAttribute('data-url')).toBe('https://docs.example/');
    const select = node.querySelector('select')! as unknown as { value: string; getAttribute(name: string): string | null };
    expect([select.value, select.getAttribute('data-kind'), select.getAttribute('data-ei')]).toEqual(['1', 'control', '3']);
  });

  it('markdown block renders markdown', () => {
    expect(render([{ type: 'markdown', text: '**Done** in [CI](https://ci.example)' }]).querySelector('.bk-block-markdown')!.innerHTML).toContain('<strong>Done</strong>');
  });

  it('rich_text: sections with styles, links, mentions, emoji, preformatted, quote and lists', () => {
    const node = render([
      {
        type: 'rich_text',
        elements: [
          {
            type: 'rich_text_section',
            elements: [
              { type: 'text', text: 'Hi ', style: { bold: true } },
              { type: 'user', user_id: 'U0ALICE' },
              { type: 'text', text: ' see ' },
              { type: 'link', url: 'https://x.example', text: 'this', style: { italic: true } },
              { type: 'emoji', name: 'wave', unicode: '1f44b' },
              { type: 'channel', channel_id: 'C0OPS' },
              { type: 'broadcast', range: 'here' },
              { type: 'text', text: 'code', style: { code: true } },
            ],
          },
          { type: 'rich_text_preformatted', elements: [{ type: 'text', text: 'kubectl get pods\n<none>' }] },
          { type: 'rich_text_quote', elements: [{ type: 'text', text: 'quoted' }] },
          { type: 'rich_text_list', style: 'ordered', indent: 1, elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'first' }] }, { type: 'rich_text_section', elements: [{ type: 'text', text: 'second' }] }] },
          { type: 'rich_text_list', style: 'bullet', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'dot' }] }] },
        ],
      },
    ]);
    const section = node.querySelector('.rt-section')!;
    expect(section.textContent).toBe('Hi @alice see this👋#ops@herecode');
    expect(section.querySelector('strong')!.textContent).toBe('Hi ');
    expect(section.querySelector('em a')!.getAttribute('href')).toBe('https://x.example/');
    expect(section.querySelector('code')!.textContent).toBe('code');
    expect(node.querySelector('pre')!.textContent).toBe('kubectl get pods\n<none>');
    expect(node.querySelector('blockquote')!.textContent).toBe('quoted');
    expect(Array.from(node.querySelectorAll('ol li')).map((item) => item.textContent)).toEqual(['first', 'second']);
    expect(node.querySelector('ul li')!.textContent).toBe('dot');
    expect(node.querySelector('.bk-unknown')).toBeNull();
  });

  it('input blocks: label, optional, hint, the element, and the error slot by block_id', () => {
    const node = parse(window, blockKit.renderBlocks([{ type: 'input', block_id: 'f:0', optional: true, label: plain('Reason'), hint: plain('Why'), element: { type: 'plain_text_input', action_id: 'v', multiline: true, initial_value: 'because' } }], { ...WORKSPACE_CONTEXT, errors: { 'f:0': 'Too short' } }));
    expect(node.querySelector('label')!.textContent).toBe('Reason (optional)');
    expect(node.querySelector('textarea')!.textContent).toBe('because');
    expect(node.querySelector('.bk-hint')!.textContent).toBe('Why');
    const error = node.querySelector('[data-error-for="f:0"]')!;
    expect([error.textContent, error.hasAttribute('hidden')]).toEqual(['Too short', false]);
  });
});

describe('what the renderer does not know', () => {
  it('shows an unknown block as formatted JSON, in place', () => {
    const node = render([{ type: 'divider' }, { type: 'video', title: plain('<b>clip</b>'), video_url: 'https://v.example' }, { type: 'divider' }]);
    const unknown = node.querySelector('.bk-unknown')!;
    expect(unknown.closest('[data-block-index]')!.getAttribute('data-block-index')).toBe('1');
    expect(JSON.parse(unknown.querySelector('pre')!.textContent!)).toEqual({ type: 'video', title: plain('<b>clip</b>'), video_url: 'https://v.example' });
    expect(node.querySelector('b')).toBeNull();
  });

  it('shows unknown elements, text objects, rich-text parts and non-objects as JSON', () => {
    const node = render([
      { type: 'actions', elements: [{ type: 'users_select', action_id: 'u' }] },
      { type: 'section', text: { type: 'weird', text: 'x' } },
      { type: 'rich_text', elements: [{ type: 'rich_text_table' }] },
      'not a block',
      { type: 'input', label: plain('Who'), element: { type: 'conversations_select', action_id: 'c' } },
    ]);
    expect(node.querySelectorAll('.bk-unknown').length).toBe(5);
  });
});

describe('blocks from an attacker', () => {
  const evil = '<img src=x onerror=alert(1)><script>alert(1)</script>';
  it('render inert whatever field the markup is in', () => {
    const node = render([
      { type: 'header', text: plain(evil) },
      { type: 'section', block_id: `"><img src=x onerror=alert(1)>`, text: mrkdwn(evil), fields: [plain(evil)], accessory: { type: 'image', image_url: 'javascript:alert(1)', alt_text: evil } },
      { type: 'context', elements: [plain(evil), { type: 'image', image_url: 'data:image/svg+xml,<svg onload=alert(1)>', alt_text: '"onload="alert(1)' }] },
      { type: 'actions', elements: [{ type: 'button', action_id: evil, text: plain(evil), url: 'javascript:alert(1)', value: evil }, { type: 'overflow', options: [option(evil, evil)] }] },
      { type: 'image', image_url: 'javascript:alert(1)', alt_text: evil, title: plain(evil) },
      { type: 'markdown', text: `${evil} [x](javascript:alert(1))` },
      { type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: evil }, { type: 'link', url: 'javascript:alert(1)', text: evil }] }] },
      { type: 'input', label: plain(evil), element: { type: 'static_select', options: [option(evil, evil)], placeholder: plain(evil) } },
      { type: evil },
    ]);
    expectInert(node);
    expect(node.querySelector('script, img[src="x"]')).toBeNull();
    expect(node.querySelector('[data-url]')).toBeNull();
    expect(node.textContent).toContain('<script>alert(1)</script>');
  });
});
