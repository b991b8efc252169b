import type { Tracer } from '@opentelemetry/api';
import type { App } from '@slack/bolt';
import type { Logger } from 'pino';
import type { CallDecider } from '../../approvals/decide-call.js';
import type { CurrentEvaluation } from '../../approvals/policy/governing-policy.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { ThreadWorker } from '../../conversation/thread-worker.js';
import type { StateStore } from '../../store/state-store.js';
import type { JsonSchemaValidator } from '../../tools/json-schema-validator.js';
import type { ToolSchemas } from '../../tools/tool-schemas.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { ChannelsOf } from '../channel-membership.js';
import { createOrganisationMembership } from '../organisation-membership.js';
import type { UsergroupMembers } from '../usergroup-members.js';
import { registerAppHome } from './app-home.js';
import { registerAnswerQuestion } from './answer-question.js';
import { registerCountersignCommand } from './countersign-command.js';
import { registerGrantApproval } from './grant-approval.js';
import { registerApprovalActions } from './approval-actions.js';
import { registerDenyWithReason } from './deny-with-reason.js';
import { registerEditCall } from './edit-call.js';
import { registerMessageDeleted } from './message-deleted.js';
import { registerMessageListeners } from './message-listeners.js';
import { registerReplyQuestion } from './reply-question.js';
import { registerRetryTurn } from './retry-turn.js';
import { registerUsergroupChanges } from './usergroup-changes.js';
import { registerViewFullInput } from './view-full-input.js';

export interface ListenerDependencies {
  store: StateStore;
  worker: ThreadWorker;
  messenger: ThreadMessenger;
  decider: CallDecider;
  toolSchemas: ToolSchemas;
  validator: JsonSchemaValidator;
  audit: AuditLog;
  resolveGroups: UsergroupMembers;
  /** The channels a person is in (App Home shows and decides only their channels' requests). */
  channelsOf: ChannelsOf;
  /** The config in force's evaluation of a waiting call (App Home lists by it, as the decider judges by it). */
  currentEvaluation: CurrentEvaluation;
  now: () => number;
  botUserId: string;
  followTtlMs: number;
  logger: Logger;
  /** Where the Slack event spans go; default the global tracer provider's. */
  tracer?: Tracer;
  /** How long a click or a reply waits for an unavailable store; default `CLICK_STORE_WAIT_MS`. */
  storeWaitMs?: number;
}

/** Every Slack entry point of the bot, in one list: messages, card buttons and modal submits. */
export function registerListeners(app: App, listenerDependencies: ListenerDependencies): void {
  // One cache of who belongs to the organisation, for every entry point.
  const dependencies = { ...listenerDependencies, organisationMembership: createOrganisationMembership({ logger: listenerDependencies.logger }) };
  registerMessageListeners(app, dependencies);
  registerMessageDeleted(app, dependencies);
  registerApprovalActions(app, dependencies);
  registerDenyWithReason(app, dependencies);
  registerEditCall(app, dependencies);
  registerViewFullInput(app, dependencies);
  registerAnswerQuestion(app, dependencies);
  registerReplyQuestion(app, dependencies);
  registerGrantApproval(app, dependencies);
  registerCountersignCommand(app, dependencies);
  registerRetryTurn(app, dependencies);
  registerAppHome(app, dependencies);
  registerUsergroupChanges(app, dependencies);
  app.error(async (error) => {
    dependencies.logger.error({ event: 'bolt-error', err: error }, 'unhandled error in a Slack listener');
  });
}
