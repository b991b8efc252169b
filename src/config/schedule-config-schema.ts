import { Cron } from 'croner';
import { z } from 'zod';
import { channelIdSchema, toolPatternSchema, uniqueList } from './policy-config-schema.js';

/**
 * `schedules:` in countersign.yml: prompts the bot runs by itself in a channel on a cron schedule
 * (the "heartbeat" mode). Each firing is a turn in its own thread whose requester is the schedule.
 */
export interface ScheduleConfig {
  /** Names the schedule in its message, in the audit trail (`schedule:<name>`) and in its firings' claims. */
  name: string;
  /** Five fields: minute hour day-of-month month day-of-week (croner syntax, e.g. `*\/15 * * * *`). */
  cron: string;
  /** Where the firing's message and thread go. */
  channel: string;
  /** What the bot is asked, as if a person had written it. */
  prompt: string;
  /** IANA time zone the cron fields are read in; default UTC. */
  timezone?: string;
  /**
   * Tools (names or globs, as in policy rules) this schedule runs without a card, even when the
   * policy would ask. A rule with `autoApprove: forbidden` still asks; so does every other tool.
   */
  autoApprove: string[];
}

const SCHEDULE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** The five fields as an operator writes them, with what each accepts (for the messages). */
const CRON_FIELDS = [
  { name: 'minute', accepts: '0-59' },
  { name: 'hour', accepts: '0-23' },
  { name: 'day-of-month', accepts: '1-31' },
  { name: 'month', accepts: '1-12 or JAN-DEC' },
  { name: 'day-of-week', accepts: '0-7 or SUN-SAT' },
] as const;

/**
 * Why `cron` cannot be used, or undefined when it can. Minute precision: a firing is claimed per
 * minute. Read in `timezone` (UTC unless given), as the scheduler reads it.
 */
export function cronProblem(cron: string, timezone?: string): string | undefined {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return `invalid cron expression: needs 5 fields (minute hour day month weekday), got ${fields.length}`;
  let parsed: Cron;
  try {
    parsed = new Cron(cron, { paused: true, timezone: timezone ?? 'UTC' });
  } catch (error) {
    return `invalid cron expression: ${fieldProblem(fields) ?? (error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error))}`;
  }
  // A valid pattern can still name no date (30 February): started, it would never run and say nothing.
  if (parsed.nextRun() === null) return `invalid cron expression: it never fires: no month in its month field (${fields[3]}) has a day in its day-of-month field (${fields[2]})`;
  return undefined;
}

/**
 * The first field croner refuses, tried alone with every other field `*`, quoted as written:
 * croner's own message gives its internal value (month 13 as "12", day 0 as "-1").
 */
function fieldProblem(fields: readonly string[]): string | undefined {
  const index = fields.findIndex((_field, position) => {
    try {
      new Cron(fields.map((each, other) => (other === position ? each : '*')).join(' '), { paused: true, timezone: 'UTC' });
      return false;
    } catch {
      return true;
    }
  });
  const field = CRON_FIELDS[index];
  return field ? `the ${field.name} field (${field.accepts}) is not valid: ${fields[index]}` : undefined;
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const scheduleSchema = z
  .strictObject({
    name: z.string().regex(SCHEDULE_NAME_PATTERN, { error: 'must be letters, digits, _ or -, starting with a letter or digit, at most 64' }),
    cron: z.string(),
    channel: channelIdSchema,
    prompt: z.string().trim().min(1, 'must not be empty'),
    timezone: z
      .string()
      .refine(isTimeZone, { error: 'must be an IANA time zone such as Europe/Paris or UTC' })
      .optional(),
    autoApprove: z.preprocess((value) => (value === null ? undefined : value), uniqueList(toolPatternSchema).default([])),
  })
  .superRefine((schedule, context) => {
    const problem = cronProblem(schedule.cron, schedule.timezone !== undefined && isTimeZone(schedule.timezone) ? schedule.timezone : undefined);
    if (problem) context.addIssue({ code: 'custom', path: ['cron'], message: problem });
  });

/** Names are unique: a firing is claimed by name, so two schedules of one name would share claims. */
export const schedulesSchema = z.array(scheduleSchema).superRefine((schedules, context) => {
  const seen = new Set<string>();
  schedules.forEach((schedule, index) => {
    if (seen.has(schedule.name)) context.addIssue({ code: 'custom', path: [index, 'name'], message: `${schedule.name} is the name of an earlier schedule; names must be unique` });
    seen.add(schedule.name);
  });
});

export const SCHEDULE_CONFIG_KEYS: readonly string[] = Object.keys(scheduleSchema.shape);
