import { describe, expect, it } from 'vitest';
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

  it('a Revoke click whose grants cannot be read says that nothing changed (no write was tried)', async () => {
    const revokeGrant = async () => undefined;
    const carol = countersignHarness({ listGrants: redisDown, revokeGrant });
    expect(await carol.clickRevoke('g1')).toBe('returned');
    expect(carol.postEphemeral.mock.calls[0]![0].text).toContain('nothing changed');
  });
});
