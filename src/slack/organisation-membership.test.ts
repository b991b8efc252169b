import type { WebClient } from '@slack/web-api';
import { describe, expect, it, vi } from 'vitest';
import { createOrganisationMembership, membershipFromPayload } from './organisation-membership.js';

const INSTALL = 'T0OURS';

function clientAnswering(answer: () => Promise<unknown>) {
  const info = vi.fn(answer);
  return { client: { users: { info } } as unknown as WebClient, info };
}

describe('organisation membership', () => {
  it('takes the same workspace as a member and another one as outside, unless the install is on Enterprise Grid or the payload does not say', () => {
    expect(membershipFromPayload({ userId: 'U1', userTeamId: INSTALL, teamId: INSTALL, enterpriseId: undefined })).toBe('member');
    expect(membershipFromPayload({ userId: 'U1', userTeamId: 'T0PARTNER', teamId: INSTALL, enterpriseId: undefined })).toBe('external');
    expect(membershipFromPayload({ userId: 'U1', userTeamId: undefined, teamId: INSTALL, enterpriseId: undefined })).toBe('ask-slack');
    expect(membershipFromPayload({ userId: 'U1', userTeamId: 'T0SISTER', teamId: INSTALL, enterpriseId: 'E0ACME' })).toBe('ask-slack');
  });

  it("on Enterprise Grid goes by the user's enterprise as users.info gives it, cached; a failed lookup is unverified and asked again", async () => {
    let now = 0;
    const membership = createOrganisationMembership({ ttlMs: 1_000, now: () => now });
    const sister = { userId: 'USISTER', userTeamId: 'T0SISTER', teamId: INSTALL, enterpriseId: 'E0ACME' };
    const failing = clientAnswering(async () => Promise.reject(new Error('fatal_error')));
    expect(await membership.of({ client: failing.client, user: sister })).toBe('unverified');
    const answering = clientAnswering(async () => ({ ok: true, user: { id: 'USISTER', enterprise_user: { enterprise_id: 'E0ACME' } } }));
    expect(await membership.of({ client: answering.client, user: sister })).toBe('member');
    expect(await membership.of({ client: answering.client, user: sister })).toBe('member');
    expect(answering.info).toHaveBeenCalledTimes(1);
    now = 1_000;
    const other = clientAnswering(async () => ({ ok: true, user: { id: 'USISTER', enterprise_user: { enterprise_id: 'E0OTHER' } } }));
    expect(await membership.of({ client: other.client, user: sister })).toBe('external');
    const noEnterprise = clientAnswering(async () => ({ ok: true, user: { id: 'UGUEST' } }));
    expect(await membership.of({ client: noEnterprise.client, user: { ...sister, userId: 'UGUEST' } })).toBe('external');
  });

  it("asks users.info for a person whose own workspace the payload leaves out (a slash command), once within the cache's lifetime", async () => {
    let now = 0;
    const membership = createOrganisationMembership({ ttlMs: 1_000, now: () => now });
    const commander = { userId: 'UCAROL', userTeamId: undefined, teamId: INSTALL, enterpriseId: undefined };
    const ours = clientAnswering(async () => ({ ok: true, user: { id: 'UCAROL', team_id: INSTALL } }));
    expect(await membership.of({ client: ours.client, user: commander })).toBe('member');
    // Slack failing or rate-limiting a minute's second command does not refuse someone it has just told us about.
    const failing = clientAnswering(async () => Promise.reject(new Error('ratelimited')));
    expect(await membership.of({ client: failing.client, user: commander })).toBe('member');
    expect(ours.info).toHaveBeenCalledTimes(1);
    expect(failing.info).not.toHaveBeenCalled();
    now = 1_000;
    expect(await membership.of({ client: failing.client, user: commander })).toBe('unverified');

    const partner = { userId: 'UPARTNER', userTeamId: undefined, teamId: INSTALL, enterpriseId: undefined };
    const partners = clientAnswering(async () => ({ ok: true, user: { id: 'UPARTNER', team_id: 'T0PARTNER' } }));
    expect(await membership.of({ client: partners.client, user: partner })).toBe('external');
    const nothingSaid = clientAnswering(async () => ({ ok: true, user: { id: 'UNOBODY' } }));
    expect(await membership.of({ client: nothingSaid.client, user: { ...partner, userId: 'UNOBODY' } })).toBe('external');
  });

  it('on Enterprise Grid counts a person of another workspace of the same enterprise whose workspace the payload leaves out', async () => {
    const membership = createOrganisationMembership();
    const sister = { userId: 'USISTER', userTeamId: undefined, teamId: INSTALL, enterpriseId: 'E0ACME' };
    const answering = clientAnswering(async () => ({ ok: true, user: { id: 'USISTER', team_id: 'T0SISTER', enterprise_user: { enterprise_id: 'E0ACME' } } }));
    expect(await membership.of({ client: answering.client, user: sister })).toBe('member');
    const other = clientAnswering(async () => ({ ok: true, user: { id: 'UOTHER', team_id: 'T0OTHER', enterprise_user: { enterprise_id: 'E0OTHER' } } }));
    expect(await membership.of({ client: other.client, user: { ...sister, userId: 'UOTHER' } })).toBe('external');
  });
});
