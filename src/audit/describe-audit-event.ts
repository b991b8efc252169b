import type { AuditEvent, ToolReturnedEvent, ToolStartedEvent } from './audit-event.js';

/** One event as the table shows it; every cell is plain text, one line. */
export interface AuditEventCells {
  tool: string;
  who: string;
  result: string;
  details: string;
}

const NOBODY = '-';

/** Picks what a reviewer asks of each kind of event: which tool, who, what came of it, and the rest. */
export function describeAuditEvent(event: AuditEvent): AuditEventCells {
  switch (event.type) {
    case 'approval-requested':
      return {
        tool: event.toolName,
        who: event.requesterId,
        result: 'requested',
        details: join([
          `input ${compactJson(event.input)}`,
          event.approvers !== undefined && `approvers ${event.approvers}`,
          event.expiresAt !== undefined && `expires ${utcTime(event.expiresAt)}`,
          `in ${place(event.channel, event.threadTs)}`,
        ]),
      };
    case 'decision':
      return {
        tool: event.toolName,
        who: event.userId,
        result: event.outcome,
        // The reason or answer first: inputs can be long, and the table cuts details short.
        details: join([
          event.reason !== undefined && `reason ${JSON.stringify(event.reason)}`,
          Object.hasOwn(event, 'answer') && `answer ${compactJson(event.answer)}`,
          event.quorum !== undefined && `quorum ${event.quorum.have}/${event.quorum.need}`,
          event.version !== undefined && `of version ${event.version + 1}`,
          event.approvedBy !== undefined && `approved by ${event.approvedBy.join(', ')}`,
          event.editedInput === undefined
            ? `input ${compactJson(event.originalInput)}`
            : `edited to ${compactJson(event.editedInput)} from ${compactJson(event.originalInput)}`,
          event.versions !== undefined && `versions ${event.versions.map((version) => `${version.version + 1}${version.editedBy ? ` by ${version.editedBy}` : ' (model)'} ${compactJson(version.input)}`).join('; ')}`,
          event.channel !== undefined && `in ${place(event.channel, event.threadTs)}`,
        ]),
      };
    case 'input-edited':
      return {
        tool: event.toolName,
        who: event.userId,
        result: 'edited',
        details: join([
          `version ${event.version + 1}`,
          event.changes.length > 0 && `changed ${event.changes.join('; ')}`,
          `input ${compactJson(event.input)}`,
          event.channel !== undefined && `in ${place(event.channel, event.threadTs)}`,
        ]),
      };
    case 'action-refused':
      return {
        tool: event.toolName ?? NOBODY,
        who: event.userId,
        result: 'refused',
        details: join([`tried to ${event.action} (${event.code}): ${event.reason}`, event.channel !== undefined && `in ${event.channel}`]),
      };
    case 'unauthorized-attempt':
      return { tool: event.toolName, who: event.userId, result: 'refused', details: `tried to ${event.action}: ${event.reason}` };
    case 'expired':
      return { tool: event.toolName, who: NOBODY, result: 'expired', details: `step ${event.stepId}` };
    case 'escalated':
      return {
        tool: event.toolName,
        who: NOBODY,
        result: 'escalated',
        details: join([`hop ${event.hop} of ${event.hops}`, event.reminded && 'reminded', event.addedApprovers.length > 0 && `added ${event.addedApprovers.join(', ')}`, `step ${event.stepId}`]),
      };
    case 'grant-created':
    case 'grant-revoked':
    case 'grant-used':
      return {
        tool: event.toolName,
        who: event.userId,
        result: event.type.slice('grant-'.length),
        details: join([
          `${event.scope} grant in ${place(event.channel, event.threadTs)}`,
          event.grantedBy !== undefined && event.grantedBy !== event.userId && `granted by ${event.grantedBy}`,
          `until ${utcTime(event.expiresAt)}`,
          event.identicalArgumentsOnly ? 'identical arguments only' : 'any arguments',
          `grant ${event.grantId}`,
        ]),
      };
    case 'auto-approved':
      return {
        tool: event.toolName,
        who: NOBODY,
        result: 'auto',
        details: join([
          event.mode === 'global' ? 'needs no approval' : event.mode === 'schedule' ? `allowed by schedule ${event.schedule ?? '?'}` : 'allowed in this channel',
          event.grantId !== undefined && `grant ${event.grantId}`,
          event.requesterId !== undefined && `for ${event.requesterId}`,
          `input ${compactJson(event.input)}`,
          `in ${place(event.channel, event.threadTs)}`,
        ]),
      };
    case 'tool-started':
      return {
        tool: event.toolName,
        who: NOBODY,
        result: 'started',
        details: join([`on ${basisText(event.basis)}`, `input ${compactJson(event.input)}`, `in ${place(event.channel, event.threadTs)}`]),
      };
    case 'tool-executed':
      return {
        tool: event.toolName,
        who: NOBODY,
        result: event.status,
        details: join([
          // An interrupted call's exit and duration are not known: its process stopped while it ran.
          ...(event.status === 'interrupted' ? [] : howItReturned(event)),
          event.error !== undefined && `error ${JSON.stringify(event.error)}`,
          `in ${place(event.channel, event.threadTs)}`,
        ]),
      };
    default:
      // Written by a newer version of the bot: still show that something happened.
      return { tool: NOBODY, who: NOBODY, result: NOBODY, details: compactJson(event) };
  }
}

/** A returned call's exit code (commands) and how long it ran. */
function howItReturned(event: ToolReturnedEvent): Array<string | false> {
  return [event.exitCode !== undefined && (event.exitCode === null ? 'killed by a signal' : `exit ${event.exitCode}`), `took ${duration(event.durationMs)}`];
}

/** Why a call was allowed to run, as the reviewer checks it. */
function basisText(basis: ToolStartedEvent['basis']): string {
  switch (basis.kind) {
    case 'approval':
      return `approval of version ${basis.version + 1} by ${basis.approvedBy.join(', ')} (step ${basis.stepId})`;
    case 'grant':
      return `grant ${basis.grantId} by ${basis.grantedBy}`;
    case 'auto-approve':
      return `auto-approve (${basis.mode}${basis.schedule === undefined ? '' : ` ${basis.schedule}`})`;
    case 'no-approval-needed':
      return 'no approval needed';
  }
}

/** `2024-05-01 12:00:03`, always UTC so reviewers in different zones compare the same thing. */
export function utcTime(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

function join(parts: Array<string | false>): string {
  return parts.filter((part) => part !== false).join(' · ');
}

function place(channel: string, threadTs: string | undefined): string {
  return threadTs === undefined ? channel : `${channel}/${threadTs}`;
}

function compactJson(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

function duration(milliseconds: number): string {
  return milliseconds < 1_000 ? `${Math.round(milliseconds)}ms` : `${(milliseconds / 1_000).toFixed(1)}s`;
}
