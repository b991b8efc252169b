import { describe, expect, it } from 'vitest';
import { countersignHarness, grantInOps } from './countersign-command.test-support.js';

describe('/countersign grants with more grants than it lists', () => {
  it('tells the person that more grants are active than the 20 shown (as `/countersign pending` does)', async () => {
    const carol = countersignHarness({ listGrants: async () => Array.from({ length: 25 }, (_, index) => grantInOps(index)) });
    await carol.type('grants');
    const reply = carol.postEphemeral.mock.calls[0]![0];
    const shown = JSON.stringify(reply.blocks);
    // With blocks, `text` is only the notification fallback: the message shows the blocks.
    expect(shown.match(/Revoke/g)).toHaveLength(20);
    expect(shown).toMatch(/more/);
  });

  it('lists (with Revoke) the grant given last, not only the 20 oldest: for anyone but its grantor this list is the only Revoke', async () => {
    const carol = countersignHarness({ listGrants: async () => Array.from({ length: 25 }, (_, index) => grantInOps(index)) });
    await carol.type('grants');
    const reply = carol.postEphemeral.mock.calls[0]![0];
    // Grants come oldest first (store order); g24 is the one just given. App Home lists only the viewer's own grants.
    expect(JSON.stringify(reply.blocks)).toContain('"value":"g24"');
  });
});
