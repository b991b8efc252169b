import type { App } from '@slack/bolt';
import type { Logger } from 'pino';
import type { UsergroupMembers } from '../usergroup-members.js';

/**
 * Someone joined or left a user group (or the group was edited): its cached members are dropped,
 * so the next click is judged on what Slack says now rather than on a read up to five minutes old.
 * The event only says which group changed; its members are read again when a click needs them.
 */
export function registerUsergroupChanges(app: App, { resolveGroups, logger }: { resolveGroups: UsergroupMembers; logger: Logger }): void {
  const forget = (groupId: unknown) => {
    // A payload is untrusted: only a group id is looked at, and only to empty a cache entry.
    if (typeof groupId !== 'string' || groupId === '') return;
    resolveGroups.forget(groupId);
    logger.debug({ event: 'usergroup-changed', groupId }, 'user group changed; its members will be read again');
  };
  app.event('subteam_members_changed', async ({ event }) => forget(event.subteam_id));
  app.event('subteam_updated', async ({ event }) => forget(event.subteam?.id));
}
