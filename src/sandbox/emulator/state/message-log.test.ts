import { describe, expect, it } from 'vitest';
import { createMessageLog, type StoredMessage } from './message-log.js';

const message = (ts: string, text = ts): StoredMessage => ({ channel: 'C1', ts, text });

describe('the message log', () => {
  it('keeps each channel in ts order whatever order messages are stored in, equal ts in the order stored', () => {
    const log = createMessageLog({ onChange: () => {} });
    for (const ts of ['1700000000.000300', '1700000000.000100', '1700000005.000000', '1700000000.000200', '1699999999.999999']) log.store(message(ts));
    log.store(message('1700000000.000200', 'second at .000200'));
    log.store({ channel: 'C2', ts: '1600000000.000001', text: 'elsewhere' });
    expect(log.inChannel('C1').map((stored) => stored.text)).toEqual([
      '1699999999.999999',
      '1700000000.000100',
      '1700000000.000200',
      'second at .000200',
      '1700000000.000300',
      '1700000005.000000',
    ]);
    // Compared as numbers, not strings: a shorter fraction is not a smaller ts.
    log.store(message('1700000005.1', 'a tenth of a second later'));
    expect(log.inChannel('C1').at(-1)?.text).toBe('a tenth of a second later');
    expect(log.all().map((stored) => stored.channel)).toEqual(['C2', 'C1', 'C1', 'C1', 'C1', 'C1', 'C1', 'C1']);
  });

  it('leaves a list it handed out as it was when more messages arrive', () => {
    const log = createMessageLog({ onChange: () => {} });
    log.store(message('1700000000.000100'));
    const before = log.inChannel('C1');
    log.store(message('1700000000.000200'));
    log.store(message('1600000000.000000'));
    expect(before.map((stored) => stored.ts)).toEqual(['1700000000.000100']);
    expect(log.inChannel('C1')).toHaveLength(3);
  });
});
