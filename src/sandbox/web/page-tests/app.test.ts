import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeStep } from '../../../approvals/pending-step.test-support.js';
import { buildApprovalCard } from '../../../slack/blocks/approval-card.js';
import { denyReasonView } from '../../../slack/views/deny-reason-view.js';
import type { SandboxSnapshot } from '../../sandbox-api.js';
import { app, newWindow, type StartedApp } from './page-modules.test-support.js';

const PARENT = '1700000000.000100';
const CARD = '1700000001.000200';
const step = makeStep(['ap1'], { requesterId: 'U0ALICE', channel: 'C0OPS', threadTs: PARENT });
const card = buildApprovalCard({ step });
const approveButton = card.blocks.find((block) => block.type === 'actions') as unknown as { block_id: string; elements: Record<string, unknown>[] };

function snapshot(overrides: Partial<SandboxSnapshot> = {}): SandboxSnapshot {
  return {
    workspace: {
      teamId: 'T0TEAM',
      botUserId: 'UBOT',
      botName: 'countersign',
      users: [
        { id: 'U0ALICE', name: 'alice', role: 'requester' },
        { id: 'U0BOB', name: 'bob', role: 'on-call approver' },
        { id: 'U0CAROL', name: 'carol', role: 'SRE lead' },
      ],
      channels: [{ id: 'C0OPS', name: 'ops' }],
      demoModel: true,
    },
    messages: [
      { channel: 'C0OPS', ts: PARENT, user: 'U0ALICE', text: '<@UBOT> restart the worker in staging' },
      { channel: 'C0OPS', ts: CARD, threadTs: PARENT, user: 'UBOT', botId: 'B0BOT', text: card.text, blocks: card.blocks },
    ],
    ephemerals: [{ id: 'E1', channel: 'C0OPS', user: 'U0BOB', text: 'Only *bob* sees this', at: 1_700_000_002_000 }],
    views: [],
    statuses: { [`C0OPS:${PARENT}`]: 'is running restart_service…' },
    ...overrides,
  };
}

class FakeEventSource {
  static last: FakeEventSource | undefined;
  private listeners = new Map<string, ((event: { data?: string }) => void)[]>();
  closed = false;
  constructor(readonly url: string) {
    FakeEventSource.last = this;
  }
  addEventListener(type: string, listener: (event: { data?: string }) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  close() {
    this.closed = true;
  }
  emit(type: string, data?: unknown) {
    for (const listener of this.listeners.get(type) ?? []) listener(data === undefined ? {} : { data: JSON.stringify(data) });
  }
}

interface Call {
  url: string;
  method: string;
  body: unknown;
}

let window: ReturnType<typeof newWindow>;
let root: ReturnType<ReturnType<typeof newWindow>['document']['createElement']>;
let calls: Call[];
let answers: Record<string, unknown>;
let stored: Map<string, string>;
let started: StartedApp;

async function settle() {
  for (let round = 0; round < 5; round++) await new Promise((resolve) => setTimeout(resolve, 0));
}

function start(first: SandboxSnapshot = snapshot(), href = 'http://localhost:3000/') {
  started = app.startApp({
    root,
    fetch: async (url, init) => {
      const method = init?.method ?? 'GET';
      if (method === 'GET') return { ok: true, status: 200, json: async () => first };
      calls.push({ url, method, body: JSON.parse(init?.body ?? 'null') });
      return { ok: true, status: 200, json: async () => answers[url] ?? { ok: true } };
    },
    EventSource: FakeEventSource,
    storage: { getItem: (key) => stored.get(key) ?? null, setItem: (key, value) => void stored.set(key, value) },
    timeZone: 'UTC',
    location: { href, origin: new URL(href).origin },
  });
  FakeEventSource.last!.emit('open');
  FakeEventSource.last!.emit('snapshot', first);
}

const $ = (selector: string) => root.querySelector(selector);
const $$ = (selector: string) => Array.from(root.querySelectorAll(selector));
const click = (selector: string) => {
  const node = $(selector);
  if (!node) throw new Error(`nothing matches ${selector}`);
  (node as unknown as { click(): void }).click();
};
const text = (selector: string) => $(selector)?.textContent ?? null;

function typeInto(composer: 'channel' | 'thread', typed: string) {
  const textarea = $(`[data-composer="${composer}"] textarea`) as unknown as { value: string; dispatchEvent(event: unknown): void };
  textarea.value = typed;
  textarea.dispatchEvent(new window.KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
}

beforeEach(() => {
  window = newWindow();
  root = window.document.createElement('div');
  window.document.body.appendChild(root);
  calls = [];
  answers = {};
  stored = new Map();
});

afterEach(async () => {
  started?.stop();
  await window.happyDOM.close();
});

describe('the sandbox page against a stub server', () => {
  it('shows the channel like Slack: sidebar with roles, demo banner, messages, reply count and status', () => {
    start();
    expect($('[data-banner]')!.hasAttribute('hidden')).toBe(false);
    expect($$('[data-act-as]').map((button) => button.textContent)).toEqual(['@alice (you)requester', '@bobon-call approver', '@carolSRE lead']);
    expect(text('[data-channel-header] .channel-name')).toBe('# ops');
    expect(text('[data-timeline="channel"] .msg .msg-text')).toBe('@countersign restart the worker in staging');
    expect(text('[data-timeline="channel"] .msg-replies')).toBe('1 reply');
    expect(text('[data-timeline="channel"] .msg-status')).toBe('countersign is running restart_service…');
    expect($('[data-thread]')!.hasAttribute('hidden')).toBe(true);
    expect(FakeEventSource.last!.url).toBe('/api/events');
  });

  it('shows an ephemeral only to the user it is for, with "Only visible to you"', () => {
    start();
    expect($('.msg-ephemeral')).toBeNull();
    click('[data-act-as="U0BOB"]');
    expect(text('.msg-ephemeral .msg-only-you')).toContain('Only visible to you');
    expect($('.msg-ephemeral .msg-body strong')!.textContent).toBe('bob');
    expect(stored.get('countersign-sandbox-user')).toBe('U0BOB');
    click('[data-act-as="U0CAROL"]');
    expect($('.msg-ephemeral')).toBeNull();
  });

  it('opens the thread with the card, and clicking Approve posts the ActionRequest Slack would make', async () => {
    start();
    click('[data-act-as="U0BOB"]');
    click('[data-open-thread]');
    expect($('[data-thread]')!.hasAttribute('hidden')).toBe(false);
    expect(text('[data-thread-status]')).toBe('countersign is running restart_service…');
    expect($('[data-timeline="thread"] .bk-header-text')!.textContent).toBe('🔒 Approval needed');
    click('[data-timeline="thread"] .bk-btn-primary');
    await settle();
    expect(calls).toEqual([
      {
        url: '/api/actions',
        method: 'POST',
        body: {
          user: 'U0BOB',
          channel: 'C0OPS',
          container: { type: 'message', messageTs: CARD, threadTs: PARENT },
          blockId: approveButton.block_id,
          actionId: 'countersign_approve',
          element: approveButton.elements[0],
        },
      },
    ]);
  });

  it('asks for confirmation before sending a button with confirm, and sends nothing when denied', async () => {
    const confirm = { title: { type: 'plain_text', text: 'Restart prod?' }, text: { type: 'mrkdwn', text: 'This restarts *every* pod.' }, confirm: { type: 'plain_text', text: 'Restart' }, deny: { type: 'plain_text', text: 'Stop' }, style: 'danger' };
    const blocks = [{ type: 'actions', block_id: 'b1', elements: [{ type: 'button', action_id: 'go', text: { type: 'plain_text', text: 'Go' }, value: 'v', confirm }] }];
    start(snapshot({ messages: [{ channel: 'C0OPS', ts: PARENT, user: 'UBOT', text: 'card', blocks }] }));
    click('[data-kind="button"]');
    expect(text('[data-dialog-host] .modal-title')).toBe('Restart prod?');
    expect($('[data-dialog-host] .confirm-text strong')!.textContent).toBe('every');
    expect(text('[data-confirm-ok]')).toBe('Restart');
    expect($('[data-confirm-ok]')!.className).toContain('bk-btn-danger');
    click('[data-confirm-deny]');
    await settle();
    expect($('[data-dialog-host] .modal')).toBeNull();
    expect(calls).toEqual([]);
    click('[data-kind="button"]');
    click('[data-confirm-ok]');
    await settle();
    expect(calls.map((call) => [call.url, (call.body as { actionId: string }).actionId, (call.body as { blockId: string }).blockId])).toEqual([['/api/actions', 'go', 'b1']]);
  });

  it('sends menu choices and overflow options with what was selected', async () => {
    const option = (label: string) => ({ text: { type: 'plain_text', text: label }, value: label });
    const blocks = [
      { type: 'section', block_id: 's', text: { type: 'mrkdwn', text: 'More' }, accessory: { type: 'overflow', action_id: 'more', options: [option('retry'), option('cancel')] } },
      { type: 'actions', block_id: 'a', elements: [{ type: 'static_select', action_id: 'pick', options: [option('one'), option('two')] }] },
    ];
    start(snapshot({ messages: [{ channel: 'C0OPS', ts: PARENT, user: 'UBOT', text: 'x', blocks }] }));
    click('[data-kind="overflow"][data-option="1"]');
    const select = $('select[data-kind="control"]') as unknown as { value: string; dispatchEvent(event: unknown): void };
    select.value = '0';
    select.dispatchEvent(new window.Event('change', { bubbles: true }));
    await settle();
    expect(calls.map((call) => (call.body as { actionId: string; selected: unknown }).selected)).toEqual([
      { text: { type: 'plain_text', text: 'cancel', emoji: true }, value: 'cancel' },
      { text: { type: 'plain_text', text: 'one', emoji: true }, value: 'one' },
    ]);
  });

  it('posts typed messages with mentions converted and text escaped, and opens the bot’s thread', async () => {
    start();
    answers['/api/messages'] = { ok: true, ts: '1700000009.000900' };
    typeInto('channel', '@countersign restart the worker for @bob & <everyone> in #ops');
    await settle();
    expect(calls).toEqual([
      { url: '/api/messages', method: 'POST', body: { user: 'U0ALICE', channel: 'C0OPS', text: '<@UBOT> restart the worker for <@U0BOB> &amp; &lt;everyone&gt; in <#C0OPS|ops>' } },
    ]);
    expect(started.ui.threadTs).toBe('1700000009.000900');
    expect(($('[data-composer="channel"] textarea') as unknown as { value: string }).value).toBe('');
    typeInto('thread', 'thanks @countersign.');
    await settle();
    expect(calls[1]!.body).toEqual({ user: 'U0ALICE', channel: 'C0OPS', text: 'thanks <@UBOT>.', threadTs: '1700000009.000900' });
  });

  it('sends /countersign pending and /countersign grants as slash commands', async () => {
    start();
    typeInto('channel', '/countersign pending');
    typeInto('channel', '/countersign grants');
    typeInto('channel', '/giphy cats');
    await settle();
    expect(calls.map((call) => [call.url, call.body])).toEqual([
      ['/api/commands', { user: 'U0ALICE', channel: 'C0OPS', command: '/countersign', text: 'pending' }],
      ['/api/commands', { user: 'U0ALICE', channel: 'C0OPS', command: '/countersign', text: 'grants' }],
    ]);
    expect(text('[data-composer="channel"] [data-note]')).toContain('/giphy is not a command here');
  });

  it('updates live: a streaming answer changes in place, the draft and the open thread stay', () => {
    start();
    click('[data-open-thread]');
    const draft = $('[data-composer="thread"] textarea') as unknown as { value: string };
    draft.value = 'half-typed';
    const answer = { channel: 'C0OPS', ts: '1700000003.000300', threadTs: PARENT, user: 'UBOT', text: 'Restarting', streaming: true };
    FakeEventSource.last!.emit('snapshot', snapshot({ messages: [...snapshot().messages, answer] }));
    expect(text('[data-timeline="thread"] [data-ts="1700000003.000300"] .msg-text')).toBe('Restarting');
    expect($('[data-timeline="thread"] [data-ts="1700000003.000300"] .msg-cursor')).not.toBeNull();
    FakeEventSource.last!.emit('snapshot', snapshot({ messages: [...snapshot().messages, { ...answer, text: 'Restarted *worker*.', streaming: false, edited: true }], statuses: {} }));
    expect(text('[data-timeline="thread"] [data-ts="1700000003.000300"] .msg-text')).toBe('Restarted worker.');
    expect($('[data-timeline="thread"] [data-ts="1700000003.000300"] .msg-cursor')).toBeNull();
    expect(text('[data-timeline="thread"] [data-ts="1700000003.000300"] .msg-edited')).toBe('(edited)');
    expect($('[data-thread-status]')!.hasAttribute('hidden')).toBe(true);
    expect(text('[data-timeline="channel"] .msg-replies')).toBe('2 replies');
    expect(started.ui.threadTs).toBe(PARENT);
    expect(($('[data-composer="thread"] textarea') as unknown as { value: string }).value).toBe('half-typed');
  });
});

describe('permalinks', () => {
  const pending = { id: 'E2', channel: 'C0OPS', user: 'U0ALICE', text: '1 waiting', at: 1_700_000_005_000, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: `• <http://localhost:3000/archives/C0OPS/p${CARD.replace('.', '')}|open the card> · <https://example.com/elsewhere|elsewhere>` } }] };

  it('a link to a message of the sandbox opens its thread in the page', () => {
    start(snapshot({ ephemerals: [pending] }));
    const [card, elsewhere] = $$('.msg-ephemeral a') as unknown as { click(): void; getAttribute(name: string): string }[];
    expect(elsewhere!.getAttribute('target')).toBe('_blank');
    expect(started.ui.threadTs).toBeUndefined();
    card!.click();
    expect(started.ui.threadTs).toBe(PARENT);
    expect($('[data-thread]')!.hasAttribute('hidden')).toBe(false);
  });

  it('the page opened at a permalink shows that thread', () => {
    start(snapshot(), `http://localhost:3000/archives/C0OPS/p${CARD.replace('.', '')}`);
    expect(started.ui.threadTs).toBe(PARENT);
  });
});

describe('modals in the page', () => {
  const view = denyReasonView({ call: step.calls[0]!, privateMetadata: '{}' }) as unknown as Record<string, unknown>;
  const withModal = (extra: Partial<SandboxSnapshot['views'][number]> = {}) => snapshot({ views: [{ viewId: 'V1', user: 'U0BOB', view, ...extra }] });
  const reason = () => $('[data-modal-host] textarea') as unknown as { value: string };

  it('opens only on its user’s screen, keeps what is typed across snapshots, and submits state.values', async () => {
    stored.set('countersign-sandbox-user', 'U0BOB');
    start(withModal());
    expect(text('[data-modal-host] .modal-title')).toBe('Deny with reason');
    const typed = reason();
    typed.value = 'wrong namespace';
    FakeEventSource.last!.emit('snapshot', withModal());
    expect(reason()).toBe(typed);
    expect(reason().value).toBe('wrong namespace');
    answers['/api/views/submit'] = { ok: true, outcome: 'errors', errors: { reason: 'Say which namespace' } };
    click('[data-modal-submit]');
    await settle();
    expect(calls).toEqual([{ url: '/api/views/submit', method: 'POST', body: { user: 'U0BOB', viewId: 'V1', values: { reason: { value: { type: 'plain_text_input', value: 'wrong namespace' } } } } }]);
    expect(text('[data-error-for="reason"]')).toBe('Say which namespace');
    answers['/api/views/submit'] = { ok: true, outcome: 'closed' };
    click('[data-modal-submit]');
    await settle();
    expect($('[data-modal-host] .modal')).toBeNull();
    click('[data-act-as="U0ALICE"]');
    expect($('[data-modal-host] .modal')).toBeNull();
  });

  it('is hidden for other users, shows errors from the snapshot, and Cancel closes it', async () => {
    start(withModal({ errors: { reason: 'Too vague' } }));
    expect($('[data-modal-host] .modal')).toBeNull();
    click('[data-act-as="U0BOB"]');
    expect(text('[data-error-for="reason"]')).toBe('Too vague');
    click('[data-modal-host] .modal-cancel');
    await settle();
    expect(calls).toEqual([{ url: '/api/views/close', method: 'POST', body: { viewId: 'V1', user: 'U0BOB' } }]);
    expect($('[data-modal-host] .modal')).toBeNull();
  });

  it('checks required fields itself before sending, as Slack does', async () => {
    stored.set('countersign-sandbox-user', 'U0BOB');
    const required = { ...view, blocks: [{ type: 'input', block_id: 'why', label: { type: 'plain_text', text: 'Why' }, element: { type: 'plain_text_input', action_id: 'v' } }] };
    start(snapshot({ views: [{ viewId: 'V1', user: 'U0BOB', view: required }] }));
    click('[data-modal-submit]');
    await settle();
    expect(calls).toEqual([]);
    expect(text('[data-error-for="why"]')).toBe('Please complete this required field.');
  });
});
