import { describe, expect, it } from 'vitest';
import { parseConfigFile } from './config-file.js';
import { problemsOf } from './config-problems.test-support.js';

/** One schedule; `entries` may override the defaults written before them. */
const schedule = (entries: string) => {
  const defaults = ['name: disk-check', 'channel: C0OPS0001', 'prompt: Check the disks'].filter((entry) => !entries.includes(`${entry.split(':')[0]}:`));
  return `schedules:\n  - { ${[...defaults, entries].join(', ')} }\n`;
};

describe('schedules config', () => {
  it('reads a schedule with its defaults', () => {
    const config = parseConfigFile(schedule("cron: '*/15 * * * *', timezone: Europe/Paris, autoApprove: [get_pods, 'k8s.get_*']"), 'countersign.yml');
    expect(config.schedules).toEqual([
      { name: 'disk-check', cron: '*/15 * * * *', channel: 'C0OPS0001', prompt: 'Check the disks', timezone: 'Europe/Paris', autoApprove: ['get_pods', 'k8s.get_*'] },
    ]);
    expect(parseConfigFile('instructions: hi\n', 'countersign.yml').schedules).toEqual([]);
    expect(parseConfigFile(schedule("cron: '0 9 * * 1-5'"), 'countersign.yml').schedules[0]?.autoApprove).toEqual([]);
  });

  it.each([
    ["cron: '61 * * * *'", 'countersign.yml schedules[0].cron', /invalid cron expression/],
    ["cron: 'every monday'", 'countersign.yml schedules[0].cron', /invalid cron expression/],
    ["cron: '*/5 * * * * *'", 'countersign.yml schedules[0].cron', /invalid cron expression: needs 5 fields/],
    ["cron: '* * * * *', timezone: Mars/Olympus", 'countersign.yml schedules[0].timezone', /IANA time zone/],
    ["cron: '* * * * *', channel: '#ops'", 'countersign.yml schedules[0].channel', /channel id/],
    ["cron: '* * * * *', autoApprove: ['bad tool!']", 'countersign.yml schedules[0].autoApprove[0]', /tool name or a glob/],
    ["cron: '* * * * *', prompt: ''", 'countersign.yml schedules[0].prompt', /must not be empty/],
    ["cron: '* * * * *', every: 5m", 'countersign.yml schedules[0].every', /not a known setting/],
  ])('names the field of a bad schedule (%s)', (entries, field, message) => {
    const problems = problemsOf(schedule(entries));
    expect(problems).toContainEqual({ field, message: expect.stringMatching(message) });
  });

  it('needs every schedule to have a cron and unique names', () => {
    expect(problemsOf('schedules:\n  - { name: a, channel: C0OPS0001, prompt: hi }\n')).toContainEqual({ field: 'countersign.yml schedules[0].cron', message: 'is required' });
    const twice = `${schedule("cron: '* * * * *'")}  - { name: disk-check, channel: C0OPS0001, prompt: again, cron: '0 * * * *' }\n`;
    expect(problemsOf(twice)).toContainEqual({ field: 'countersign.yml schedules[1].name', message: expect.stringMatching(/unique/) });
  });
});

describe('schedules config: a cron croner reads but an operator would not', () => {
  const withCron = (cron: string) => `schedules:\n  - { name: disk-check, channel: C0OPS0001, prompt: Check the disks, cron: '${cron}' }\n`;

  it.each([
    ['0 9 * 13 *', 'month', '13'],
    ['0 9 0 * *', 'day-of-month', '0'],
    ['0 9 * 1-13 *', 'month', '1-13'],
    ['*/0 * * * *', 'minute', '*/0'],
    ['0 9 * JAN-FOO *', 'month', 'JAN-FOO'],
  ])('names the bad field of %s with the value the operator wrote', (cron, field, written) => {
    const [problem] = problemsOf(withCron(cron));
    // croner's own message gives its internal value: "Invalid value for month: 12", "Invalid value for day: -1".
    expect(problem?.message).toContain(`the ${field} field`);
    expect(problem?.message).toContain(`: ${written}`);
  });

  it.each(['0 9 30 2 *', '0 9 31 4,6 *'])('refuses %s, which can never fire, instead of starting a schedule that never runs', (cron) => {
    expect(problemsOf(withCron(cron))).toContainEqual({ field: 'countersign.yml schedules[0].cron', message: expect.stringMatching(/never fires/) });
  });

  it('takes a cron whose next firing is years away (29 February)', () => {
    expect(parseConfigFile(withCron('0 9 29 2 *'), 'countersign.yml').schedules[0]?.cron).toBe('0 9 29 2 *');
  });
});
