import { describe, expect, it } from 'vitest';
import { compose } from './page-modules.test-support.js';

const workspace = {
  botUserId: 'UBOT',
  botName: 'countersign',
  users: [
    { id: 'U0ALICE', name: 'alice', role: 'requester' },
    { id: 'U0BOB', name: 'bob', role: 'approver' },
  ],
  channels: [{ id: 'C0OPS', name: 'ops' }],
};

describe('what the composer posts', () => {
  it('turns handles into mentions the way Slack’s client does, and leaves everything else as typed', () => {
    expect(compose.toSlackText('@countersign ask @Alice, then @bob.', workspace)).toBe('<@UBOT> ask <@U0ALICE>, then <@U0BOB>.');
    expect(compose.toSlackText('mail bob@alice.example or @nobody', workspace)).toBe('mail bob@alice.example or @nobody');
    expect(compose.toSlackText('@here see #ops and #nowhere', workspace)).toBe('<!here> see <#C0OPS|ops> and #nowhere');
  });

  it('escapes &, < and > as Slack does, so typed markup is never a link or mention', () => {
    expect(compose.toSlackText('<@U0BOB> <!channel> a&b > c', workspace)).toBe('&lt;@U0BOB&gt; &lt;!channel&gt; a&amp;b &gt; c');
  });

  it('reads slash commands', () => {
    expect(compose.parseSlashCommand('/countersign  pending ')).toEqual({ command: '/countersign', text: 'pending' });
    expect(compose.parseSlashCommand('/Countersign')).toEqual({ command: '/countersign', text: '' });
    expect(compose.parseSlashCommand('not /a command')).toBeUndefined();
  });
});
