/**
 * What Slack's clients do before sending: `@alice` typed in the composer becomes `<@U0ALICE>`, the
 * form the bot (and Slack's `app_mention`) reads. Handles nobody has stay as typed.
 */
export function linkMentions({ text, handles }: { text: string; handles: ReadonlyMap<string, string> }): string {
  return text.replace(/(^|[^<\w@])@([a-z0-9](?:[a-z0-9._-]*[a-z0-9])?)/gi, (whole, before: string, handle: string) => {
    const id = handles.get(handle.toLowerCase());
    return id === undefined ? whole : `${before}<@${id}>`;
  });
}
