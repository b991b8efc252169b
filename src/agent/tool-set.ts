import { cachedSchema } from './cached-schema.js';
import { jsonSchema, tool, type ModelMessage, type Tool, type ToolApprovalConfiguration, type ToolSet } from 'ai';
import type { ToolContext, ToolDefinition } from '../tools/tool-definition.js';
import { evaluateCallPolicy } from '../approvals/evaluate-call-policy.js';
import type { Grant } from '../approvals/grant.js';
import { isAutoApproveActive } from '../approvals/policy/auto-approve.js';
import type { PolicyEvaluation } from '../approvals/policy/evaluate-policy.js';
import type { PolicyConfig } from '../config/policy-config-schema.js';
import { faultPoint } from '../runtime/fault-points.js';
import type { ExecutionBasis } from '../audit/audit-event.js';
import { inputHash } from '../approvals/input-version.js';
import { editNoteText, notRunEditNoteText, type EditNote } from './edit-note.js';
import type { ContentFreeFailure } from '../tracing/trace-context.js';
import { approvedCallsAwaitingRun, unavailableToolText, type AwaitingCall } from './unavailable-tools.js';
import { changedParametersText, fitsCurrentSchema, resumeSchema } from './changed-parameters.js';
import { changedDefinitionText, currentFingerprint, definitionChangedSince } from './changed-definition.js';
import { definitionFingerprintOf } from '../tools/definition-fingerprint.js';
import { GrantNoLongerHoldsError } from './revoked-grant.js';
import { isToolNotStartedError } from '../tools/tool-not-started-error.js';
import { TURN_CLOSED_TEXT, TurnClosedError, type TurnRuns } from './turn-runs.js';

export type TurnContext = Omit<ToolContext, 'toolCallId' | 'idempotencyKey' | 'abortSignal' | 'assertHeld'>;

/** How one execution went, for the audit trail. */
export interface ExecutionReport {
  toolCallId: string;
  toolName: string;
  status: 'ok' | 'error';
  durationMs: number;
  /** For command tools: the process exit code (`null` when killed by a signal). */
  exitCode?: number | null;
  error?: string;
}

/** Runs one tool execution inside a span; `failed` marks it failed (a non-zero exit does not throw). */
export type TraceExecution = <RESULT>(call: { toolName: string; toolCallId: string }, run: (failed: (failure: ContentFreeFailure) => void) => Promise<RESULT>) => Promise<RESULT>;

/**
 * What the turn's calls did, so a turn that fails after executing tools can still record them:
 * `output` for a call that returned, `error` for one that started and threw (it may have had
 * effects, so it must not run again either). `started: false` for a call refused before its start
 * (`notRunAnswer`): its output is the text saying nothing ran, kept as its result in the history,
 * and whoever tells people what ran leaves it out of that (asked again, it would run for the first time).
 * `edit` for a call a human edited: what ran (or, not started, what was to run) was their version.
 */
export type ExecutionRecord = { toolCallId: string; toolName: string; input: unknown; started?: false; edit?: EditNote } & ({ output: unknown } | { error: string });

/** A call a human approved: it runs with the approved version of the input, whatever the model asked. */
export interface ApprovedRun {
  /** The call the approval is for: it counts only for a call of this tool with this model input. */
  toolName: string;
  /** `inputHash` of the model's own input (version 0), as the call appears in the history. */
  modelInputHash: string;
  input: unknown;
  inputHash: string;
  /** For an edited version: the form values the editor submitted, which the schema turned into `input`. */
  submittedInput?: unknown;
  /** What the tool did when the card was built (`definitionFingerprintOf`); absent in older steps. */
  definitionFingerprint?: string;
  basis: Extract<ExecutionBasis, { kind: 'approval' }>;
  /** For a call a human edited: told to the model with the result. */
  edit?: EditNote;
}

/** What the turn is told just before a call runs (to write the marker), and what it may refuse. */
export interface StartingCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  basis: ExecutionBasis;
  /**
   * For a call the gate let through without a card: why (auto-approve mode, a grant, the schedule),
   * for the audit written with the marker. The call may still be refused after this (the grant's
   * checks); it is told to `onAutomaticApproval` only once its tool is invoked.
   */
  automatic?: AutomaticApproval;
}

/**
 * Builds the AI SDK tools for one turn. Tools are rebuilt per turn (they hold functions and are
 * never persisted), which is also how any process can resume a turn another process started.
 * A call runs only with a basis: a human approval of the exact input (`approvedRuns`) or what the
 * gate decided for it (`bases`: no approval needed, auto-approve, a grant). Without one it does not
 * run, so nothing the history says can run a call the gate did not let through.
 * An approved call whose tool this process does not have gets a stand-in that answers "not run"
 * (see `unavailableTool`); so does one whose approved input no longer fits its tool's schema after
 * a deploy (see `resumeSchema`, and `fitsCurrentSchema` for an edited version), and one whose tool
 * a deploy made do something else under the same name and input (see `definitionChangedSince`).
 */
export function createTurnTools(options: {
  definitions: readonly ToolDefinition[];
  context: TurnContext;
  executions: ExecutionRecord[];
  /** The history the turn resumes: its approved calls are answered even when their tool is gone. */
  messages?: readonly ModelMessage[];
  /** Calls humans approved in the step this turn resumes, by tool call id. */
  approvedRuns?: ReadonlyMap<string, ApprovedRun>;
  /** Filled by the gate (`createToolApproval`) for calls it let through itself. */
  bases: ReadonlyMap<string, GateBasis>;
  /** Filled by the gate (its `onAutomaticApproval`) for calls it let through without a card, by tool call id. */
  automaticApprovals?: ReadonlyMap<string, AutomaticApproval>;
  /**
   * Told of a call let through without a card once its tool was invoked and did not refuse to start:
   * never for one a check before the start refused (a revoked grant) or its tool refused at its start
   * (`ToolNotStartedError`), which did not run.
   */
  onAutomaticApproval?: (approval: AutomaticApproval) => void;
  /** Awaited just before a tool runs: records that it started (and may refuse, e.g. when fenced). */
  beforeExecute?: (call: StartingCall) => Promise<void>;
  /** Told when a call returned or threw. */
  afterExecute?: (report: ExecutionReport) => Promise<void> | void;
  /** Runs each execution inside a trace span (see `TraceExecution`). */
  traceExecution?: TraceExecution;
  /** Handed to tools as `ToolContext.assertHeld`. */
  assertHeld?: () => Promise<void>;
  /** The gate's grant lookup: a call let through on a grant checks that grant again before it starts. */
  findGrant?: FindGrant;
  /** The turn's runs: once it is closed (it failed), no call starts; see `TurnRuns`. */
  runs?: TurnRuns;
}): ToolSet {
  const tools: ToolSet = {};
  const { runs } = options;
  // Every execution is tracked, from its first check to its record, so a failed turn can wait for it.
  const traceExecution: TraceExecution = (call, run) => {
    const traced = () => (options.traceExecution ? options.traceExecution(call, run) : run(() => {}));
    return runs ? runs.track(traced) : traced();
  };
  const awaitingInHistory = approvedCallsAwaitingRun(options.messages ?? []);
  const answerNotRun = (call: NotRunCall, text: string, failure: ContentFreeFailure) =>
    notRunAnswer({ ...call, text, failure, executions: options.executions, ...(options.afterExecute ? { afterExecute: options.afterExecute } : {}) });
  for (const definition of options.definitions) {
    const execute = definition.execute;
    const schema = cachedSchema(definition.inputSchema);
    if (!execute) {
      // No execute: the AI SDK stops the turn at this call and waits for a result we supply.
      tools[definition.name] = tool({ description: definition.description, inputSchema: schema });
      continue;
    }
    // Approved calls of this tool whose input a deploy made unfit for its schema since the approval.
    const changed = new Set<string>();
    const awaiting: AwaitingCall[] = awaitingInHistory.filter((call) => call.toolName === definition.name);
    const fingerprint = currentFingerprint(definition);
    tools[definition.name] = tool({
      description: definition.description,
      inputSchema: awaiting.length > 0 ? resumeSchema({ schema, awaiting, changed }) : schema,
      execute: (modelInput: unknown, { toolCallId, abortSignal }) =>
        traceExecution({ toolName: definition.name, toolCallId }, async (failed) => {
          const call = { toolCallId, toolName: definition.name, input: modelInput };
          const approved = approvalOf(options.approvedRuns, call);
          // Every "not run" of a call a human edited keeps the edit: the model's own call stays in the history as it
          // made it, and without the note it reads the refusal as about its own arguments and sends them again.
          const edited = approved?.edit ? { edit: approved.edit } : {};
          // Like `unavailableTool`: nothing starts (no beforeExecute, so no marker), and the audit trail and the model hear "not run".
          if (changed.has(toolCallId)) return answerNotRun({ ...call, ...edited, failed }, changedParametersText(definition.name), PARAMETERS_CHANGED);
          // An approval on record under this id but for another call (a repeated id) is not this call's.
          if (!approved && options.approvedRuns?.has(toolCallId)) throw new Error('Not run: the approval on record for this call id is for a different call.');
          const gate = approved ? undefined : gateDecisionOf(options.bases, call);
          const basis = approved?.basis ?? gate?.basis;
          if (!basis) throw new Error('Not run: there is no approval on record for this call.');
          const automatic = gate ? automaticApprovalOf(options.automaticApprovals, call) : undefined;
          // Once the tool was invoked: said to have run without a card only if nothing refused its start.
          const ranAutomatically = () => {
            if (automatic) options.onAutomaticApproval?.(automatic);
          };
          const input = approved ? approved.input : modelInput;
          // The SDK checked the model's input against the current schema; an edited version it never saw. Command,
          // HTTP and MCP tools parse it again when they run (after the marker); a TypeScript tool would take it as is.
          if (approved && approved.inputHash !== approved.modelInputHash) {
            const schemaInput = Object.hasOwn(approved, 'submittedInput') ? approved.submittedInput : approved.input;
            if (!(await fitsCurrentSchema({ schema, schemaInput, approvedInput: approved.input }))) {
              return answerNotRun({ ...call, input, ...edited, failed }, changedParametersText(definition.name), PARAMETERS_CHANGED);
            }
          }
          // The approver signed the tool as the card's step recorded it, not whatever a deploy made of it since.
          if (approved && (await definitionChangedSince({ recorded: approved.definitionFingerprint, current: fingerprint }))) {
            return answerNotRun({ ...call, input, ...edited, failed }, changedDefinitionText(definition.name), DEFINITION_CHANGED);
          }
          // A grant can be revoked or expire between the gate and the start (the marker, a command slot).
          const assertGrant = gate ? grantCheck({ decision: gate, call, definitionFingerprint: fingerprint, ...(options.findGrant ? { findGrant: options.findGrant } : {}) }) : undefined;
          const started = performance.now();
          const report = (outcome: Partial<ExecutionReport>) =>
            options.afterExecute?.({ toolCallId, toolName: definition.name, status: 'ok', durationMs: Math.round(performance.now() - started), ...outcome });
          // Like `unavailableTool`: the tool never started, so the audit trail and the model hear "not run", never "failed".
          const notRun = (error: GrantNoLongerHoldsError) => answerNotRun({ ...call, input, ...edited, failed }, error.message, GRANT_GONE);
          // The grant's check is a Redis read: a process can stall on it and lose the thread meanwhile, so
          // the lease is checked after it, last before the start (a local check while the lock cannot have lapsed).
          const assertHeld = assertGrant ? async () => { await assertGrant(); await options.assertHeld?.(); } : options.assertHeld;
          // Checked before the marker, so a grant already gone leaves no tool-started behind; and by
          // the marker's write itself (beforeExecute), which refuses atomically once it is revoked.
          try {
            await assertGrant?.();
            // The turn failed meanwhile (its checks above are awaited): nothing started, nothing is recorded.
            if (runs?.closed()) throw new TurnClosedError();
            await options.beforeExecute?.({ toolCallId, toolName: definition.name, input, basis, ...(automatic ? { automatic } : {}) });
            // And again after it: a revoke that landed while the marker was written. What remains is the
            // short stretch between this check (or the one a command makes after its slot) and the start.
            if (assertGrant) await assertHeld?.();
          } catch (error) {
            if (error instanceof GrantNoLongerHoldsError) return notRun(error);
            throw error;
          }
          // The turn failed while the marker was written: the marker says the call started, so its record says it did not.
          if (runs?.closed()) return answerNotRun({ ...call, input, ...edited, failed }, TURN_CLOSED_TEXT, TURN_CLOSED);
          let output: unknown;
          try {
            output = await execute(input, {
              ...options.context,
              toolCallId,
              // Stable for this call across retries and replicas: the thread plus the model's call id.
              idempotencyKey: `${options.context.teamId}:${options.context.channel}:${options.context.threadTs}:${toolCallId}`,
              ...(abortSignal === undefined ? {} : { abortSignal }),
              ...(assertHeld === undefined ? {} : { assertHeld }),
            });
          } catch (error) {
            // A command's check after its slot (`assertHeld`): nothing was spawned.
            if (error instanceof GrantNoLongerHoldsError) return notRun(error);
            // The tool refused at its start (an MCP server gone or its tools withheld, a closed command runner,
            // a request http_request would not send, input its own check refused): nothing ran, so it is
            // recorded as not started and nobody is told it ran without a card.
            if (isToolNotStartedError(error)) return answerNotRun({ ...call, input, ...edited, failed }, error.message, NOT_STARTED);
            ranAutomatically();
            const message = error instanceof Error ? error.message : String(error);
            options.executions.push({ toolCallId, toolName: definition.name, input, error: message, ...edited });
            await report({ status: 'error', error: message });
            // The model's call in the history is not what failed: without the note it would report (and retry) its own arguments.
            if (approved?.edit) throw new Error(`${message}\n\n${editNoteText(approved.edit)}`, { cause: error });
            throw error;
          }
          ranAutomatically();
          faultPoint('after-tool');
          const outcome = commandOutcome(output);
          // A throw marks the span on its way out (traceExecution); a failed command returns instead.
          if (outcome.status === 'error') failed(commandFailure(outcome));
          await report(outcome);
          const result = approved?.edit ? { humanEdit: approved.edit, result: output } : output;
          options.executions.push({ toolCallId, toolName: definition.name, input, output: result });
          return result;
        }),
    });
  }
  const awaiting = [...(options.approvedRuns?.values() ?? []), ...awaitingInHistory];
  for (const { toolName } of awaiting) {
    if (!Object.hasOwn(tools, toolName)) tools[toolName] = unavailableTool({ toolName, traceExecution, answerNotRun, ...(options.approvedRuns ? { approvedRuns: options.approvedRuns } : {}) });
  }
  return tools;
}

const PARAMETERS_CHANGED: ContentFreeFailure = { type: 'tool_parameters_changed', description: 'approved input no longer fits the tool schema' };
const DEFINITION_CHANGED: ContentFreeFailure = { type: 'tool_definition_changed', description: 'tool definition changed since the approval' };
const UNAVAILABLE: ContentFreeFailure = { type: 'tool_unavailable', description: 'tool not available' };
const GRANT_GONE: ContentFreeFailure = { type: 'grant_no_longer_holds', description: 'grant revoked or expired' };
const NOT_STARTED: ContentFreeFailure = { type: 'tool_not_started', description: 'the tool refused the call at its start' };
const TURN_CLOSED: ContentFreeFailure = { type: 'turn_failed', description: 'the turn failed before the call started' };

/** A call answered "not run"; `edit` when a human edited it before approving (see `ApprovedRun.edit`). */
type NotRunCall = ModelCall & { failed: (failure: ContentFreeFailure) => void; edit?: EditNote };

/**
 * Answers a call that was not started: marks its span, keeps the text as the call's result (if the
 * turn fails later, the history says it did not run, so Try again will not call it interrupted),
 * reports it to the audit trail as not run, and throws the text for the model to read. For an
 * edited call the text is followed by the edit note, as a failed edited call's is.
 */
async function notRunAnswer(options: NotRunCall & {
  text: string;
  failure: ContentFreeFailure;
  executions: ExecutionRecord[];
  afterExecute?: (report: ExecutionReport) => Promise<void> | void;
}): Promise<never> {
  const { toolCallId, toolName, input, text, edit } = options;
  const answer = edit ? `${text}\n\n${notRunEditNoteText(edit)}` : text;
  options.failed(options.failure);
  options.executions.push({ toolCallId, toolName, input, output: answer, started: false, ...(edit ? { edit } : {}) });
  await options.afterExecute?.({ toolCallId, toolName, status: 'error', durationMs: 0, error: text });
  throw new Error(answer);
}

/**
 * Stands in for the tool of an approved call that this process does not have (see
 * `approvedCallsAwaitingRun`): without it the AI SDK skips the call, which then has no result, and
 * the turn fails with "the model request failed" while nothing says whether it ran. It never runs
 * anything and writes no executing marker (nothing started): it reports the call as not run to the
 * audit trail and answers the model with that, so the model can tell the user.
 */
function unavailableTool(options: {
  toolName: string;
  traceExecution: TraceExecution;
  answerNotRun: (call: NotRunCall, text: string, failure: ContentFreeFailure) => Promise<never>;
  /** To tell the model a human had edited the call (see `createTurnTools`). */
  approvedRuns?: ReadonlyMap<string, ApprovedRun>;
}): Tool {
  const { toolName } = options;
  return tool({
    description: `${toolName} is not available now.`,
    // Any input: the call is answered as it stands in the history, never run.
    inputSchema: jsonSchema<unknown>({}),
    execute: (input: unknown, { toolCallId }): Promise<unknown> => {
      const edit = approvalOf(options.approvedRuns, { toolCallId, toolName, input })?.edit;
      return options.traceExecution({ toolName, toolCallId }, (failed) => options.answerNotRun({ toolCallId, toolName, input, failed, ...(edit ? { edit } : {}) }, unavailableToolText(toolName), UNAVAILABLE));
    },
  });
}

/** A call that ran without a card: auto-approve mode, or a grant a human gave earlier. */
export interface AutomaticApproval {
  toolCallId: string;
  toolName: string;
  input: unknown;
  mode: 'channel' | 'global' | 'schedule';
  grant?: Grant;
  /** For `schedule`: the schedule whose `autoApprove` list let it run. */
  schedule?: string;
  /** Whose request the turn runs for (`TurnContext.requesterId`): for a grant, who used it, as the grantor did not ask. */
  requesterId: string;
}

/** A scheduled turn's own auto-approve list (see `scheduleAutoApproval`). */
export interface ScheduleApproval {
  schedule: string;
  covers(toolName: string): boolean;
}

/**
 * The one approval gate, handed to the AI SDK's `toolApproval`: the tool's own rule, then the
 * operator's policy (see `evaluateCallPolicy`). A tool without a rule, an unknown tool, or a rule
 * that throws all need a human: the gate fails closed. Auto-approve mode lets a call through
 * without a card, but never for a rule that forbids it, and the caller is told so it can say so.
 */
export function createToolApproval(options: {
  definitions: readonly ToolDefinition[];
  context: TurnContext;
  policy: PolicyConfig;
  /** Calls humans approved in the step being resumed: already decided, so not judged again here. */
  approvedRuns?: ReadonlyMap<string, ApprovedRun>;
  /** Receives the basis of every call the gate lets through itself. */
  bases: Map<string, GateBasis>;
  /** A live grant covering this call, if any (see `grantCovers`). */
  findGrant?: FindGrant;
  onAutomaticApproval?: (approval: AutomaticApproval) => void;
  /** For a scheduled turn: the tools its schedule runs without a card. */
  scheduleApproval?: ScheduleApproval;
}): ToolApprovalConfiguration<ToolSet, never> {
  const byName = new Map(options.definitions.map((definition) => [definition.name, definition]));
  return async ({ toolCall }) => {
    // The AI SDK asks again when it replays an approved call; the humans' decision stands, but only
    // for the very call they decided (same id, tool and model input): another call is judged afresh.
    if (approvalOf(options.approvedRuns, toolCall)) return 'user-approval';
    const letThrough = (basis: ExecutionBasis, evaluation?: PolicyEvaluation) =>
      options.bases.set(toolCall.toolCallId, { toolName: toolCall.toolName, modelInputHash: inputHash(toolCall.input), basis, ...(evaluation ? { evaluation } : {}) });
    const definition = byName.get(toolCall.toolName);
    // Nothing runs for a human-answered tool, so there is nothing to approve.
    if (definition && !definition.execute) return 'not-applicable';
    const evaluation = await evaluateCallPolicy({
      policy: options.policy,
      definition,
      toolName: toolCall.toolName,
      input: toolCall.input,
      context: options.context,
    });
    if (!evaluation.needsApproval) {
      letThrough({ kind: 'no-approval-needed' });
      return 'not-applicable';
    }
    // A schedule's list is the operator's word for that automation, but a rule forbidding automatic approval still asks.
    const schedule = options.scheduleApproval;
    if (schedule?.covers(toolCall.toolName) && evaluation.autoApprove !== 'forbidden') {
      letThrough({ kind: 'auto-approve', mode: 'schedule', schedule: schedule.schedule });
      options.onAutomaticApproval?.({ toolCallId: toolCall.toolCallId, toolName: toolCall.toolName, input: toolCall.input, requesterId: options.context.requesterId, mode: 'schedule', schedule: schedule.schedule });
      return { type: 'approved', reason: `auto-approved by schedule ${schedule.schedule}` };
    }
    if (isAutoApproveActive({ policy: options.policy, channel: options.context.channel, evaluation })) {
      const mode = options.policy.autoApprove.global ? 'global' : 'channel';
      letThrough({ kind: 'auto-approve', mode });
      options.onAutomaticApproval?.({ toolCallId: toolCall.toolCallId, toolName: toolCall.toolName, input: toolCall.input, requesterId: options.context.requesterId, mode });
      return { type: 'approved', reason: `auto-approve mode (${mode})` };
    }
    const grant = await options.findGrant?.({ toolName: toolCall.toolName, input: toolCall.input, evaluation, ...(definition ? { definitionFingerprint: () => definitionFingerprintOf(definition) } : {}) });
    if (grant) {
      letThrough({ kind: 'grant', grantId: grant.grantId, grantedBy: grant.grantedBy }, evaluation);
      options.onAutomaticApproval?.({ toolCallId: toolCall.toolCallId, toolName: toolCall.toolName, input: toolCall.input, requesterId: options.context.requesterId, mode: 'channel', grant });
      return { type: 'approved', reason: `allowed by grant ${grant.grantId} from <@${grant.grantedBy}>` };
    }
    return 'user-approval';
  };
}

/**
 * A live grant covering this call, if any (see `grantCovers`); with `grantId`, only that grant, so
 * a call let through on it can check it is still there (not revoked, not expired) before it starts.
 */
export type FindGrant = (call: {
  toolName: string;
  input: unknown;
  evaluation: PolicyEvaluation;
  grantId?: string;
  /** What the tool does now (`definitionFingerprintOf`), asked only when there are grants to check. */
  definitionFingerprint?: () => Promise<string>;
}) => Promise<Grant | undefined>;

/** What the gate let a call through on, with the call it judged, so it counts for no other call under the same id. */
export interface GateBasis {
  toolName: string;
  modelInputHash: string;
  basis: ExecutionBasis;
  /** For a grant: the policy the gate judged the call under, to check the grant again with. */
  evaluation?: PolicyEvaluation;
}

/**
 * For a call the gate let through on a grant: throws `GrantNoLongerHoldsError` unless that grant
 * is still listed and still covers the call. Fails closed without a lookup or the gate's evaluation.
 */
function grantCheck(options: { decision: GateBasis; call: ModelCall; definitionFingerprint: () => Promise<string>; findGrant?: FindGrant }): (() => Promise<void>) | undefined {
  const { decision, call, findGrant, definitionFingerprint } = options;
  const { basis, evaluation } = decision;
  if (basis.kind !== 'grant') return undefined;
  const refused = { grantId: basis.grantId, toolName: call.toolName };
  return async () => {
    const grant = findGrant && evaluation ? await findGrant({ toolName: call.toolName, input: call.input, evaluation, grantId: basis.grantId, definitionFingerprint }) : undefined;
    if (grant?.grantId !== basis.grantId) throw new GrantNoLongerHoldsError(refused);
  };
}

interface ModelCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** The humans' approval of this exact call: the same id, tool and model input as the call they decided. */
function approvalOf(approvedRuns: ReadonlyMap<string, ApprovedRun> | undefined, call: ModelCall): ApprovedRun | undefined {
  const approved = approvedRuns?.get(call.toolCallId);
  return approved && approved.toolName === call.toolName && approved.modelInputHash === inputHash(call.input) ? approved : undefined;
}

/** The gate's automatic approval of this exact call (same id, tool and model input), like `gateDecisionOf`. */
function automaticApprovalOf(automaticApprovals: ReadonlyMap<string, AutomaticApproval> | undefined, call: ModelCall): AutomaticApproval | undefined {
  const approval = automaticApprovals?.get(call.toolCallId);
  return approval && approval.toolName === call.toolName && inputHash(approval.input) === inputHash(call.input) ? approval : undefined;
}

function gateDecisionOf(bases: ReadonlyMap<string, GateBasis>, call: ModelCall): GateBasis | undefined {
  const decided = bases.get(call.toolCallId);
  return decided && decided.toolName === call.toolName && decided.modelInputHash === inputHash(call.input) ? decided : undefined;
}

/** A failed command as its span shows it: the exit code, never its output or error text. */
function commandFailure(outcome: Partial<ExecutionReport>): ContentFreeFailure {
  if (typeof outcome.exitCode === 'number' && outcome.exitCode !== 0) return { type: 'exit_code', description: `exit code ${outcome.exitCode}` };
  return { type: 'tool_error', description: 'tool reported an error' };
}

/** Command tools report an exit code; a non-zero one (or a timeout) is an error for the audit trail. */
function commandOutcome(output: unknown): Partial<ExecutionReport> {
  if (typeof output !== 'object' || output === null || !('exitCode' in output)) return {};
  const { exitCode, error, timedOut } = output as { exitCode?: unknown; error?: unknown; timedOut?: unknown };
  const code = typeof exitCode === 'number' || exitCode === null ? exitCode : undefined;
  const failed = code !== 0 || timedOut === true || typeof error === 'string';
  return {
    ...(code !== undefined ? { exitCode: code } : {}),
    ...(failed ? { status: 'error' as const } : {}),
    ...(typeof error === 'string' ? { error } : timedOut === true ? { error: 'timed out' } : {}),
  };
}
