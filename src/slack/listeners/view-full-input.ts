import type { App } from '@slack/bolt';
import type { Logger } from 'pino';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { StateStore } from '../../store/state-store.js';
import { APPROVAL_ACTION_IDS } from '../blocks/action-ids.js';
import { fullInputView } from '../views/full-input-view.js';
import { registerCallModalButton } from './call-modal-button.js';

/** "View full input": the card cut the arguments; this shows all of them, read-only, decided or not. */
export function registerViewFullInput(app: App, { store, messenger, logger }: { store: StateStore; messenger: ThreadMessenger; logger: Logger }): void {
  registerCallModalButton(app, {
    actionId: APPROVAL_ACTION_IDS.viewInput,
    buttonLabel: 'View full input',
    store,
    messenger,
    logger,
    allowClosed: true,
    view: ({ call }) => fullInputView({ call }),
  });
}
