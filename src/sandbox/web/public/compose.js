/**
 * What the Slack client does to typed text before posting: `&`, `<`, `>` escaped, `@name` turned
 * into `<@U…>` (the bot's name too), `@here` into `<!here>`, `#channel` into `<#C…|channel>`.
 */

export function toSlackText(typed, workspace) {
  const people = new Map((workspace.users ?? []).map((user) => [user.name.toLowerCase(), `<@${user.id}>`]));
  if (workspace.botName && workspace.botUserId) people.set(workspace.botName.toLowerCase(), `<@${workspace.botUserId}>`);
  for (const word of ['here', 'channel', 'everyone']) people.set(word, `<!${word}>`);
  const channels = new Map((workspace.channels ?? []).map((channel) => [channel.name.toLowerCase(), `<#${channel.id}|${channel.name}>`]));
  const escaped = typed.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  return escaped.replace(/(^|[^\w@#&])([@#])([\w.-]+)/g, (whole, before, sigil, name) => {
    const known = sigil === '@' ? people : channels;
    // "@alice." ends a sentence: the name is what is left without trailing dots and dashes.
    const trimmed = name.replace(/[.-]+$/, '');
    const token = known.get(trimmed.toLowerCase());
    return token === undefined ? whole : `${before}${token}${name.slice(trimmed.length)}`;
  });
}

/** `/countersign pending` → `{ command: '/countersign', text: 'pending' }`; undefined for a message. */
export function parseSlashCommand(typed) {
  const match = /^(\/[\w-]+)(?:\s+([\s\S]*))?$/.exec(typed.trim());
  return match ? { command: match[1].toLowerCase(), text: (match[2] ?? '').trim() } : undefined;
}

/**
 * What a composer sends for `typed`: `{ command }` (a CommandRequest), `{ message, mentionsBot }`
 * (a PostMessageRequest), or `{ refused }` with why nothing is sent.
 */
export function composed(typed, { workspace, user, channel, threadTs }) {
  const slash = parseSlashCommand(typed);
  if (slash && slash.command !== '/countersign') return { refused: `${slash.command} is not a command here. Try /countersign pending or /countersign grants.` };
  if (slash) return { command: { user, channel, command: slash.command, text: slash.text } };
  const text = toSlackText(typed, workspace);
  return { message: { user, channel, text, ...(threadTs ? { threadTs } : {}) }, mentionsBot: text.includes(`<@${workspace.botUserId}>`) };
}
