import { scheduleNameOf } from '../conversation/schedule-actor.js';

/**
 * Who may answer (or decline) an `ask_user` question: the person the turn is for. A scheduled turn
 * has no such person (its requester is the schedule, never a Slack user), so anyone in its channel
 * may, from the thread there, as with a `channel` approver; the requester stays the schedule, and
 * the answerer is held to the self-approval rules of what the turn asks for next (`turnInstigators`).
 */
export function mayAnswerQuestion({ requesterId, userId, inThreadChannel }: { requesterId: string; userId: string; inThreadChannel: boolean }): boolean {
  return scheduleNameOf(requesterId) === undefined ? userId === requesterId : inThreadChannel;
}

/** The refusal for someone else: who may `verb` the question instead (never a schedule's id as a mention). */
export function questionRefusalText({ requesterId, channel, verb }: { requesterId: string; channel: string; verb: 'answer' | 'decline' }): string {
  if (scheduleNameOf(requesterId) === undefined) return `Only <@${requesterId}> can ${verb} this question, so nothing changed.`;
  return `Only people in <#${channel}> can ${verb} this question, from the thread there, so nothing changed.`;
}
