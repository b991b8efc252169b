/**
 * The input blocks of a form as Slack submitted it: where an error can be shown when the form could
 * not be rebuilt from the stored call (the store could not be read). Showing it there keeps the
 * person's values, so they can submit again. Block ids are only used to place the message.
 */
export function submittedInputFields(view: { blocks?: ReadonlyArray<{ type: string; block_id?: string }> }): Array<{ blockId: string; control: { kind: 'input' } }> {
  return (view.blocks ?? []).flatMap((block) => (block.type === 'input' && typeof block.block_id === 'string' ? [{ blockId: block.block_id, control: { kind: 'input' as const } }] : []));
}
