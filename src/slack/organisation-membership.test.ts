import type { WebClient } from '@slack/web-api';
import { describe, expect, it, vi } from 'vitest';
import { createOrganisationMembership, membershipFromPayload } from './organisation-membership.js';

const INSTALL = 'T0OURS';

function clientAnswering(answer: () => Promise<unknown>) {
  const info = vi.fn(answer);
  return { client: { users: { info } } as unknown as WebClient, info };
}

describe('organisation membership', () => {
  it('takes the same workspace as a member and another one as outside, unless the install is on Enterprise Grid', () => {
    expect(membershipFromPayload({ userId: 'U1', userTeamId: INSTALL, teamId: INSTALL, enterpriseId: undefined })).toBe('member');
    expect(membershipFromPayload({ userId: 'U1', userTeamId: 'T0PARTNER', teamId: INSTALL, enterpriseId: undefined })).toBe('external');
    expect(membershipFromPayload({ userId: 'U1', userTeamId: undefined, teamId: INSTALL, enterpriseId: undefined })).toBe('external');
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
});
