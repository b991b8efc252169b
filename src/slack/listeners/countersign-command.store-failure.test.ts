import { describe, expect, it } from 'vitest';
import { ReplyError, WriteNotSentError } from '../../store/write-not-run.js';
import { countersignHarness, grantInOps } from './countersign-command.test-support.js';

const redisDown = async () => {
  throw new Error('Connection is closed.');
};

describe('/countersign when the store cannot be read', () => {
  it('`/countersign grants` answers the person (not silence) when the grants cannot be read', async () => {
    const carol = countersignHarness({ listGrants: redisDown });
    const settled = await carol.type('grants');
    // The listener threw to Bolt's app.error, which only logs: Carol is shown nothing at all.
    expect(settled).toBe('returned');
    expect(carol.postEphemeral).toHaveBeenCalled();
  });

  it('`/countersign pending` answers the person (not silence) when the requests cannot be read', async () => {
    const carol = countersignHarness({ listPendingSteps: redisDown, listOpenSteps: redisDown });
    const settled = await carol.type('pending');
    expect(settled).toBe('returned');
    expect(carol.postEphemeral).toHaveBeenCalled();
  });

  it('a Revoke click from `/countersign grants` is answered (as App Home answers it) when the revoke cannot be written', async () => {
    const carol = countersignHarness({ listGrants: async () => [grantInOps(1)], revokeGrant: redisDown });
    const settled = await carol.clickRevoke('g1');
    expect(settled).toBe('returned');
    expect(carol.postEphemeral).toHaveBeenCalled();
    // The write may have been applied before its reply was lost: not "nothing changed".
    expect(carol.postEphemeral.mock.calls[0]![0].text).toContain('cannot tell whether it went through');
  });

  it.each([
    { how: 'Redis refused it with an error reply', error: new ReplyError('NOREPLICAS Not enough good replicas to write.') },
    { how: 'it was never sent (the read before it failed)', error: new WriteNotSentError(new Error('Connection is closed.')) },
  ])('a Revoke click whose write did not run ($how) says that nothing changed and the grant stands', async ({ error }) => {
    const carol = countersignHarness({ listGrants: async () => [grantInOps(1)], revokeGrant: async () => Promise.reject(error) });
    expect(await carol.clickRevoke('g1')).toBe('returned');
    const text = carol.postEphemeral.mock.calls[0]![0].text;
    expect(text).not.toContain('cannot tell');
    expect(text).toContain('nothing changed: it is still in force');
  });

  it('a Revoke whose replicas did not confirm it says it was revoked (it stands on the primary), not that nothing changed', async () => {
    const revokeGrant = async () => ({ grant: grantInOps(1), unconfirmed: { wanted: 1, confirmed: 0 } });
    const carol = countersignHarness({ listGrants: async () => [grantInOps(1)], revokeGrant });
    expect(await carol.clickRevoke('g1')).toBe('returned');
    const text = carol.postEphemeral.mock.calls[0]![0].text;
    expect(text).toContain('Revoked the grant');
    expect(text).not.toContain('nothing changed');
  });

  it('a Revoke click whose grants cannot be read says that nothing changed (no write was tried)', async () => {
    const revokeGrant = async () => undefined;
    const carol = countersignHarness({ listGrants: redisDown, revokeGrant });
    expect(await carol.clickRevoke('g1')).toBe('returned');
    expect(carol.postEphemeral.mock.calls[0]![0].text).toContain('nothing changed');
  });
});
