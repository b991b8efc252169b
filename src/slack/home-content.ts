import type { Logger } from 'pino';
import { callsAwaitingUser, groupsNamedBy, openCallsIn, type AwaitingCall, type CurrentPolicyOf } from '../approvals/awaiting-user.js';
import type { PendingCall } from '../approvals/pending-step.js';
import type { PolicyEvaluation } from '../approvals/policy/evaluate-policy.js';
import type { CurrentEvaluation } from '../approvals/policy/governing-policy.js';
import type { DecisionEvent } from '../audit/audit-event.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { StateStore } from '../store/state-store.js';
import { HOME_LIST_LIMITS, type HomeContent } from './blocks/home-view.js';
import type { ChannelsOf } from './channel-membership.js';
import type { ResolveGroups } from './usergroup-members.js';

/** Open steps of the workspace read per Home view: the newest ones, the ones that matter. */
const OPEN_STEPS_READ = 200;
/** Recent decisions come from the audit trail: this far back, at most this many events read. */
const DECISIONS_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;
const AUDIT_EVENTS_READ = 2_000;

export interface HomeContentSources {
  store: StateStore;
  audit: AuditLog;
  resolveGroups: ResolveGroups;
  channelsOf: ChannelsOf;
  /** The config in force, which judges a click together with the card's policy: Home lists by both. */
  currentEvaluation: CurrentEvaluation;
  logger: Logger;
  now: () => number;
}

/**
 * What the viewer's Home tab shows, read fresh each time: the same store and policy a click is
 * judged by, so the list and the click agree (and the click is judged again anyway).
 */
export async function readHomeContent(
  { store, audit, resolveGroups, channelsOf, currentEvaluation, logger, now }: HomeContentSources,
  { linkTo, teamId, userId, notice }: { linkTo: (channel: string, ts: string) => Promise<string | undefined>; teamId: string; userId: string; notice?: string },
): Promise<HomeContent> {
  const at = now();
  const [steps, memberOf, grants, events] = await Promise.all([
    store.listOpenSteps({ teamId, limit: OPEN_STEPS_READ }),
    channelsOf(userId),
    store.listTeamGrants({ teamId }),
    // Without refusals: anyone can cause those, and they must not push decisions out of the events read.
    audit.read({ sinceMs: at - DECISIONS_WINDOW_MS, limit: AUDIT_EVENTS_READ, refusals: false }).catch(() => []),
  ]);
  const open = memberOf ? openCallsIn({ steps, memberOf, now: at }) : [];
  const currentPolicyOf = await currentPolicies(open, { currentEvaluation, logger });
  const groupIds = groupsNamedBy(open, currentPolicyOf);
  const groupMembers = groupIds.length === 0 ? new Map() : await resolveGroups(groupIds);
  const waiting = memberOf ? callsAwaitingUser({ steps, userId, memberOf, groupMembers, now: at, currentPolicyOf }) : [];
  const requests = steps.filter((step) => step.requesterId === userId);
  const linked = async <T extends { step: { channel: string; cardTs?: string } }>(item: T) => {
    const link = item.step.cardTs ? await linkTo(item.step.channel, item.step.cardTs) : undefined;
    return link ? { ...item, link } : item;
  };
  const mine = grants.filter((grant) => grant.grantedBy === userId);
  const decisions: DecisionEvent[] = [];
  // Oldest first as read: the newest decisions are at the end.
  for (const event of [...events].reverse()) {
    if (decisions.length >= HOME_LIST_LIMITS.decisions) break;
    if (event.type === 'decision' && event.userId === userId && (event.teamId === undefined || event.teamId === teamId)) decisions.push(event);
  }
  return {
    waiting: { items: await Promise.all(waiting.slice(0, HOME_LIST_LIMITS.waiting).map(linked)), total: waiting.length },
    requests: { items: await Promise.all(requests.slice(0, HOME_LIST_LIMITS.requests).map((step) => linked({ step }))), total: requests.length },
    decisions,
    grants: { items: mine.slice(0, HOME_LIST_LIMITS.grants), total: mine.length },
    ...(memberOf ? {} : { channelsUnknown: true }),
    ...(notice ? { notice } : {}),
    now: at,
  };
}

/**
 * The config in force's evaluation of each open call's current version, asked once per call and all
 * at once (a tool's own approval rule may take a while). One that throws leaves its call listed to
 * nobody, as its click could not be judged either, and the rest of the view stands.
 */
async function currentPolicies(open: readonly AwaitingCall[], { currentEvaluation, logger }: { currentEvaluation: CurrentEvaluation; logger: Logger }): Promise<CurrentPolicyOf> {
  const evaluated = new Map<PendingCall, PolicyEvaluation>();
  await Promise.all(
    open.map(async ({ step, call, version }) => {
      try {
        evaluated.set(call, await currentEvaluation({ step, call, input: version.input }));
      } catch (error) {
        logger.warn({ event: 'home-policy-failed', stepId: step.stepId, approvalId: call.approvalId, toolName: call.toolName, err: error }, 'could not evaluate the policy in force for a waiting call; App Home does not list it');
      }
    }),
  );
  return (call) => evaluated.get(call);
}
