/**
 * Test support: the sandbox page's browser modules (plain JavaScript under ../public, served as-is)
 * loaded with the types the tests rely on, and a happy-dom window to render them into. The
 * project's TypeScript has neither `allowJs` nor the DOM lib, so the modules are imported by URL
 * and typed here, and DOM objects come from happy-dom's own classes.
 */
import { Window } from 'happy-dom';

type Html = string;
/** A happy-dom element or document; the page's functions only call `querySelector(All)` on it. */
type Root = { querySelector(selector: string): unknown; querySelectorAll(selector: string): unknown };

export interface RenderContext {
  users: Record<string, string>;
  channels: Record<string, string>;
  actingUserId?: string;
  formId?: string;
  timeZone?: string;
  now?: () => number;
  errors?: Record<string, string>;
}

export interface SlackStateEntry {
  type: string;
  value?: string | null;
  selected_option?: { text: unknown; value: string } | null;
  selected_options?: { text: unknown; value: string }[];
  selected_date?: string | null;
  selected_time?: string | null;
  selected_date_time?: number | null;
  timezone?: string;
}
export type StateValues = Record<string, Record<string, SlackStateEntry>>;

export interface BlockKitModule {
  renderBlocks(blocks: unknown, ctx?: Partial<RenderContext>): Html;
  renderBlock(block: unknown, index: number, ctx?: Partial<RenderContext>): Html;
  mrkdwnToHtml(text: string, ctx?: Partial<RenderContext>, options?: { markdown?: boolean }): Html;
  plainTextToHtml(text: string, options?: { emoji?: boolean }): Html;
  renderModal(view: unknown, options: { viewId: string; errors?: Record<string, string> }, ctx?: Partial<RenderContext>): Html;
  showModalErrors(root: Root, errors?: Record<string, string>): void;
  collectStateValues(root: Root, blocks: unknown): StateValues;
  settleSelections(root: Root): void;
  validateStateValues(blocks: unknown, values: StateValues): Record<string, string>;
  renderContext(snapshot: unknown, options?: { actingUserId?: string; formId?: string; timeZone?: string; now?: () => number }): RenderContext;
}

export interface ComposeModule {
  toSlackText(typed: string, workspace: unknown): string;
  parseSlashCommand(typed: string): { command: string; text: string } | undefined;
}

export interface StartedApp {
  ui: { actingUserId?: string; channelId?: string; threadTs?: string };
  render(): void;
  stop(): void;
}

export interface AppModule {
  startApp(options: {
    root: unknown;
    fetch: (url: string, init?: { method?: string; body?: string; headers?: Record<string, string> }) => Promise<unknown>;
    EventSource: new (url: string) => unknown;
    storage?: { getItem(key: string): string | null; setItem(key: string, value: string): void };
    open?: (url: string, target: string, features: string) => void;
    location?: { href: string; origin: string };
    timeZone?: string;
    now?: () => number;
  }): StartedApp;
}

async function load<MODULE>(name: string): Promise<MODULE> {
  return (await import(new URL(`../public/${name}`, import.meta.url).href)) as MODULE;
}

export const blockKit = await load<BlockKitModule>('block-kit.js');
export const compose = await load<ComposeModule>('compose.js');
export const app = await load<AppModule>('app.js');

/** A fresh browser window; close it after the test (`window.happyDOM.close()`). */
export function newWindow(): Window {
  return new Window({ url: 'http://localhost:3000/', settings: { disableJavaScriptEvaluation: true, disableJavaScriptFileLoading: true, disableCSSFileLoading: true } });
}

/** `html` parsed into a detached element of `window`, for querying what the renderer made. */
export function parse(window: Window, html: string) {
  const container = window.document.createElement('div');
  container.innerHTML = html;
  blockKit.settleSelections(container);
  return container;
}

export const WORKSPACE_CONTEXT = {
  users: { U0ALICE: 'alice', U0BOB: 'bob', UBOT: 'countersign' },
  channels: { C0OPS: 'ops' },
  timeZone: 'UTC',
  now: () => Date.UTC(2025, 0, 15, 16, 0),
} satisfies RenderContext;
