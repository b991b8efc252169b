import type { WebClient } from '@slack/web-api';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createUsergroupMembers } from './usergroup-members.js';

/** A client whose usergroups.users.list answers from `members`, counting the calls. */
function fakeClient(members: Map<string, string[]>) {
  const calls: string[] = [];
  const client = {
    usergroups: {
      users: {
        list: async ({ usergroup }: { usergroup: string }) => {
          calls.push(usergroup);
          return { ok: true, users: members.get(usergroup) ?? [] };
        },
      },
    },
  } as unknown as WebClient;
  return { client, calls };
}

describe('user group members', () => {
  const logger = pino({ level: 'silent' });

  it('answers a click from the cache, and a fresh read from Slack (which refreshes the cache)', async () => {
    const members = new Map([['S0SRE', ['UBOB']]]);
    const { client, calls } = fakeClient(members);
    const resolve = createUsergroupMembers({ client, logger });
    expect((await resolve(['S0SRE'])).get('S0SRE')).toEqual(new Set(['UBOB']));
    members.set('S0SRE', ['UCAROL']);
    expect((await resolve(['S0SRE'])).get('S0SRE')).toEqual(new Set(['UBOB']));
    expect((await resolve(['S0SRE'], { fresh: true })).get('S0SRE')).toEqual(new Set(['UCAROL']));
    expect((await resolve(['S0SRE'])).get('S0SRE')).toEqual(new Set(['UCAROL']));
    expect(calls).toEqual(['S0SRE', 'S0SRE']);
  });

  it('reads a group again after Slack said it changed', async () => {
    const members = new Map([['S0SRE', ['UBOB']]]);
    const { client, calls } = fakeClient(members);
    const resolve = createUsergroupMembers({ client, logger });
    await resolve(['S0SRE']);
    members.set('S0SRE', ['UCAROL']);
    resolve.forget('S0SRE');
    expect((await resolve(['S0SRE'])).get('S0SRE')).toEqual(new Set(['UCAROL']));
    expect(calls).toEqual(['S0SRE', 'S0SRE']);
  });

  it('does not cache a read that was under way when the group changed', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const members = new Map([['S0SRE', ['UBOB']]]);
    const calls: string[] = [];
    const client = {
      usergroups: {
        users: {
          list: async ({ usergroup }: { usergroup: string }) => {
            calls.push(usergroup);
            const users = members.get(usergroup) ?? [];
            if (calls.length === 1) await held;
            return { ok: true, users };
          },
        },
      },
    } as unknown as WebClient;
    const resolve = createUsergroupMembers({ client, logger });
    const inFlight = resolve(['S0SRE']);
    members.set('S0SRE', ['UCAROL']);
    resolve.forget('S0SRE');
    release();
    // The read that started before the change still answers its caller, but is not kept.
    expect((await inFlight).get('S0SRE')).toEqual(new Set(['UBOB']));
    expect((await resolve(['S0SRE'])).get('S0SRE')).toEqual(new Set(['UCAROL']));
  });

  it('shares one Slack request among reads of a group made while it is under way, fresh ones included', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const calls: string[] = [];
    const client = {
      usergroups: { users: { list: async ({ usergroup }: { usergroup: string }) => { calls.push(usergroup); await held; return { ok: true, users: ['UBOB'] }; } } },
    } as unknown as WebClient;
    const resolve = createUsergroupMembers({ client, logger });
    const reads = [resolve(['S0SRE'], { fresh: true }), resolve(['S0SRE'], { fresh: true }), resolve(['S0SRE'])];
    release();
    for (const read of await Promise.all(reads)) expect(read.get('S0SRE')).toEqual(new Set(['UBOB']));
    expect(calls).toEqual(['S0SRE']);
    // Once it settled, a fresh read asks Slack again.
    await resolve(['S0SRE'], { fresh: true });
    expect(calls).toEqual(['S0SRE', 'S0SRE']);
  });

  it('does not share a read that began before the group changed', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const members = new Map([['S0SRE', ['UBOB']]]);
    const calls: string[] = [];
    const client = {
      usergroups: {
        users: {
          list: async ({ usergroup }: { usergroup: string }) => {
            calls.push(usergroup);
            const users = members.get(usergroup) ?? [];
            if (calls.length === 1) await held;
            return { ok: true, users };
          },
        },
      },
    } as unknown as WebClient;
    const resolve = createUsergroupMembers({ client, logger });
    const before = resolve(['S0SRE'], { fresh: true });
    members.set('S0SRE', ['UCAROL']);
    resolve.forget('S0SRE');
    const after = resolve(['S0SRE'], { fresh: true });
    release();
    expect((await before).get('S0SRE')).toEqual(new Set(['UBOB']));
    expect((await after).get('S0SRE')).toEqual(new Set(['UCAROL']));
    expect(calls).toEqual(['S0SRE', 'S0SRE']);
  });

  it('leaves out a group Slack did not answer for', async () => {
    const client = { usergroups: { users: { list: async () => Promise.reject(new Error('fake_http_error')) } } } as unknown as WebClient;
    const resolve = createUsergroupMembers({ client, logger });
    expect((await resolve(['S0SRE'], { fresh: true })).has('S0SRE')).toBe(false);
  });
});
