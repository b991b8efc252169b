import { describe, expect, it, vi } from 'vitest';
import { CHANNELS_UNKNOWN_TEXT, NOT_A_MEMBER_TEXT } from '../channel-membership.js';
import { formChannel } from './form-channel.js';

const THREAD = 'C0OPS';

describe('formChannel', () => {
  it("takes a claim of the thread's channel from someone Slack says is in it", async () => {
    const channelsOf = vi.fn(async () => new Set([THREAD]));
    expect(await formChannel({ claimed: THREAD, threadChannel: THREAD, userId: 'UBOB', channelsOf })).toEqual({ channel: THREAD });
    expect(channelsOf).toHaveBeenCalledWith('UBOB');
  });

  it('judges a claim from someone outside the channel as made elsewhere, with the reason to show', async () => {
    const channelsOf = async () => new Set(['C0APPROVALS']);
    expect(await formChannel({ claimed: THREAD, threadChannel: THREAD, userId: 'UDAVE', channelsOf })).toEqual({ channel: undefined, refusal: NOT_A_MEMBER_TEXT });
  });

  it('fails closed when Slack cannot say which channels the person is in', async () => {
    expect(await formChannel({ claimed: THREAD, threadChannel: THREAD, userId: 'UBOB', channelsOf: async () => undefined })).toEqual({ channel: undefined, refusal: CHANNELS_UNKNOWN_TEXT });
  });

  it('fails closed, in time for the form\'s answer, when Slack is slow to say (a rate limit, a slow answer)', async () => {
    const never = () => new Promise<ReadonlySet<string> | undefined>(() => {});
    expect(await formChannel({ claimed: THREAD, threadChannel: THREAD, userId: 'UBOB', channelsOf: never, waitMs: 20 })).toEqual({ channel: undefined, refusal: CHANNELS_UNKNOWN_TEXT });
    const failing = async (): Promise<ReadonlySet<string> | undefined> => Promise.reject(new Error('ratelimited'));
    expect(await formChannel({ claimed: THREAD, threadChannel: THREAD, userId: 'UBOB', channelsOf: failing })).toEqual({ channel: undefined, refusal: CHANNELS_UNKNOWN_TEXT });
  });

  it("takes a copy's channel (which only narrows what the person may do) and a gone step's claim as they are, without asking Slack", async () => {
    const channelsOf = vi.fn(async () => undefined);
    expect(await formChannel({ claimed: 'C0APPROVALS', threadChannel: THREAD, userId: 'UDAVE', channelsOf })).toEqual({ channel: 'C0APPROVALS' });
    expect(await formChannel({ claimed: THREAD, threadChannel: undefined, userId: 'UDAVE', channelsOf })).toEqual({ channel: THREAD });
    expect(channelsOf).not.toHaveBeenCalled();
  });
});
