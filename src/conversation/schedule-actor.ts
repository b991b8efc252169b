import { compileToolPattern } from '../approvals/policy/tool-pattern.js';
import type { ScheduleConfig } from '../config/schedule-config-schema.js';

const SCHEDULE_ACTOR_PREFIX = 'schedule:';

/**
 * The requester of a scheduled turn: never a Slack user id, so no person is "the requester" of it.
 * Rules that let the requester approve find nobody (the call waits for the other approvers, or
 * expires unrun), and self-approval rules have no one to exclude.
 */
export function scheduleActor(name: string): string {
  return `${SCHEDULE_ACTOR_PREFIX}${name}`;
}

export function scheduleNameOf(userId: string): string | undefined {
  return userId.startsWith(SCHEDULE_ACTOR_PREFIX) ? userId.slice(SCHEDULE_ACTOR_PREFIX.length) : undefined;
}

/** The schedule's own auto-approve list, for a turn it requested; undefined for anyone else's turn. */
export function scheduleAutoApproval(schedules: readonly ScheduleConfig[], requesterId: string): { schedule: string; covers(toolName: string): boolean } | undefined {
  const name = scheduleNameOf(requesterId);
  const schedule = name === undefined ? undefined : schedules.find((candidate) => candidate.name === name);
  if (!schedule || schedule.autoApprove.length === 0) return undefined;
  const patterns = schedule.autoApprove.map(compileToolPattern);
  return { schedule: schedule.name, covers: (toolName) => patterns.some((pattern) => pattern.matches(toolName)) };
}
