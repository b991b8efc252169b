import { describe, expect, it } from 'vitest';
import { modalView } from './modal-view.js';

const input = { type: 'input' as const, block_id: 'f:0', label: { type: 'plain_text' as const, text: 'Reason' }, element: { type: 'plain_text_input' as const, action_id: 'w.s' } };

describe('modalView', () => {
  it('wraps form blocks in a modal with a submit and a close button', () => {
    expect(modalView({ callbackId: 'countersign_edit_call', title: 'Edit and approve', submitLabel: 'Approve & run', privateMetadata: 'ap_1', blocks: [input] })).toEqual({
      type: 'modal',
      callback_id: 'countersign_edit_call',
      private_metadata: 'ap_1',
      title: { type: 'plain_text', text: 'Edit and approve' },
      submit: { type: 'plain_text', text: 'Approve & run' },
      close: { type: 'plain_text', text: 'Cancel' },
      blocks: [input],
    });
  });

  it('leaves the submit button out of a read-only modal', () => {
    const view = modalView({ callbackId: 'countersign_full_input', title: 'Full input', submitLabel: null, closeLabel: 'Close', privateMetadata: '', blocks: [] });
    expect(view).not.toHaveProperty('submit');
    expect(view.close).toEqual({ type: 'plain_text', text: 'Close' });
  });

  it('cuts the title and button labels to Slack’s 24 characters', () => {
    const view = modalView({ callbackId: 'c', title: 'Answer the question from the assistant', submitLabel: 'Send this answer to the model', closeLabel: '   ', privateMetadata: '', blocks: [] });
    expect([view.title.text, view.submit?.text, view.close?.text]).toEqual(['Answer the question fro…', 'Send this answer to the…', 'Cancel']);
  });

  it('refuses metadata, block lists and callback ids Slack would reject', () => {
    expect(() => modalView({ callbackId: 'c', title: 't', privateMetadata: 'x'.repeat(3001), blocks: [] })).toThrow(/private_metadata is 3001 characters/);
    expect(() => modalView({ callbackId: 'c', title: 't', privateMetadata: '', blocks: Array.from({ length: 101 }, () => ({ type: 'divider' as const })) })).toThrow(/at most 100 blocks/);
    expect(() => modalView({ callbackId: 'c'.repeat(256), title: 't', privateMetadata: '', blocks: [] })).toThrow(/callback_id/);
    const huge = Array.from({ length: 90 }, (_, index) => ({ ...input, block_id: `f:${index}`, element: { ...input.element, initial_value: '中'.repeat(3000) } }));
    expect(() => modalView({ callbackId: 'c', title: 't', privateMetadata: '', blocks: huge })).toThrow(/bytes/);
  });
});
