import { SlackCallError, SlackResponseError } from './errors/countersign-error.js';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { type RetryOptions, WebClient } from '@slack/web-api';
import type { App } from '@slack/bolt';
import { createForwardedReceiver } from './slack/front/forwarded-receiver.js';
import type { BotToFront, FrontChannel, FrontToBot } from './slack/front/front-messages.js';
import type { LanguageModel } from 'ai';
import type { TracerProvider } from '@opentelemetry/api';
import { countersignTracer } from './tracing/trace-context.js';
import type { Logger } from 'pino';
import { createLanguageModel } from './agent/create-language-model.js';
import { resolveApprovalHook, type ApprovalHookOption } from './approvals/approval-hook.js';
import { createCallDecider } from './approvals/decide-call.js';
import { evaluateCallPolicy } from './approvals/evaluate-call-policy.js';
import { createExpirySweeper } from './approvals/expiry-sweeper.js';
import type { CurrentEvaluation } from './approvals/policy/governing-policy.js';
import type { CountersignConfig } from './config/config-schema.js';
import { loadConfigFile } from './config/config-file.js';
import { wholeMilliseconds } from './config/duration.js';
import { parseEnvironment, type BotRole, type EnvironmentConfig } from './config/environment.js';
import { ignoredVariablesMessage } from './config/unknown-environment-variables.js';
import { createConversation } from './conversation/conversation.js';
import { recoverStalledWork } from './conversation/recover-stalled-work.js';
import { createMessageTakeBacks } from './conversation/message-take-back.js';
import type { KeptRetrySchedule } from './conversation/kept-retries.js';
import { createCardRefreshes } from './approvals/card-refreshes.js';
import { withMissingCopies } from './approvals/post-card-copies.js';
import { createLoadGate, createLoadMonitor } from './conversation/load-gate.js';
import { createThreadWorker, type ThreadWorker } from './conversation/thread-worker.js';
import { createWorkPuller } from './conversation/work-puller.js';
import { createScheduledTurns, type ScheduleClock } from './conversation/scheduled-turns.js';
import { createChannelPoster } from './slack/channel-poster.js';
import { createHealthServer, healthReply, metricsReply, withOtherRisks, type HttpReply } from './runtime/health-check.js';
import { describeMetricsPlacement, metricsPlacement, metricsPlacementNotice } from './http/metrics-placement.js';
import { startMetricsServer } from './http/metrics-server.js';
import { closeConnectionsAtStop, closeServer, PUBLIC_SERVER_TIMEOUTS } from './http/close-server.js';
import { createPrometheusMetrics } from './metrics/prometheus-metrics.js';
import { readPendingApprovals } from './approvals/pending-approvals.js';
import type { AuditLog } from './audit/audit-log.js';
import { createMemoryAuditLog } from './audit/memory-audit-log.js';
import { createRedisAuditLog } from './store/redis-audit-log.js';
import { environmentSecrets } from './config/environment-secrets.js';
import { createLogger } from './log/create-logger.js';
import { createSlackApp, SLACK_RETRY_CONFIG } from './slack/create-slack-app.js';
import { registerListeners } from './slack/listeners/register-listeners.js';
import { createRequestsInFlight } from './slack/requests-in-flight.js';
import { createUsergroupMembers } from './slack/usergroup-members.js';
import { createChannelMembership } from './slack/channel-membership.js';
import { createWebApiMessenger } from './slack/web-api-messenger.js';
import { createObservedSlackFetch, type SlackApiFailure } from './slack/observed-slack-fetch.js';
import { createMemoryStore } from './store/memory-store.js';
import { createRedisStore } from './store/redis-store.js';
import type { StateStore } from './store/state-store.js';
import type { RedisFailureListener } from './store/redis-failures.js';
import { createCommandSlots, DEFAULT_MAX_RUNNING_COMMANDS, type CommandSlots } from './tools/command/command-slots.js';
import { loadTools, withWireToolNames, type LoadedTools } from './tools/load-tools.js';
import { createJsonSchemaValidator } from './tools/json-schema-validator.js';
import { createToolSchemas } from './tools/tool-schemas.js';
import type { ToolDefinition } from './tools/tool-definition.js';

export interface CreateBotOptions {
  /** Default: read from `process.env` (throws a ConfigError listing every problem). */
  environment?: EnvironmentConfig;
  /** Default: the file `COUNTERSIGN_CONFIG` names (or ./countersign.yml, or the built-in defaults). */
  config?: CountersignConfig;
  /** Tools written in TypeScript, added to the ones the config file defines. */
  tools?: ToolDefinition[];
  logger?: Logger;
  /** Injected in tests; otherwise built from the environment. */
  store?: StateStore;
  audit?: AuditLog;
  /** Where `${VAR}` in the `http:` and `mcpServers:` config is read (and stdio MCP servers' base environment); default process.env. */
  env?: Record<string, string | undefined>;
  /** The clock for expiry and decisions; injected in tests. */
  now?: () => number;
  /** How often this process looks for expired requests and due reminders. */
  sweepIntervalMs?: number;
  /** Per model call (default 2 minutes); a hung model server then fails the turn with a message. */
  modelTimeoutMs?: number;
  /** How long a turn runs before its thread shows "is thinking…" (default 250 ms); quicker turns show none. */
  statusDelayMs?: number;
  /** How long a click or a reply waits for an unavailable store before it is answered that it could not be taken (default 5 s); tests shorten it. */
  storeWaitMs?: number;
  /** How long a posted card's ts waits for an unavailable store before it is given up on (default 10 s); tests shorten it. */
  cardRecordWaitMs?: number;
  /** When a take-back or card redraw Slack refused is tried again (default `KEPT_RETRIES`); tests shorten it. */
  keptRetries?: KeptRetrySchedule;
  /**
   * How long a thread's lock outlives a process that died holding it (default 30 s); other
   * processes pick up its work after that. A live holder renews it.
   */
  lockTtlMs?: number;
  /** Default: `COUNTERSIGN_ROLE` (`all`). See `BotRole`. */
  role?: BotRole;
  /**
   * Turns (work items) this process runs at once, at most: default 1000 (the event loop's delay limits
   * it first) unless this process's own event loop serves Slack (`COUNTERSIGN_SLACK_FRONT=inline`, Socket
   * Mode): 8 there.
   */
  maxConcurrentTurns?: number;
  /** No new turn starts while this process's event loop lags more than this: default 500 ms for a worker, 100 ms for a process that also serves Slack. */
  maxEventLoopDelayMs?: number;
  model?: LanguageModel;
  /**
   * Decides a call in code before people see its card: return `{ decision: 'approve' }`,
   * `{ decision: 'deny', reason }`, or `undefined` to leave it to people. Called once per call that
   * needs approval, with a copy of its input; recorded in the audit trail as `hook:<name>`. A hook
   * that throws or runs past its time limit (default 5 s) leaves the call to people. An approval
   * settles the call (quorum included); rules with `autoApprove: forbidden` can only be denied.
   */
  onApprovalRequest?: ApprovalHookOption;
  /** The timers `schedules:` run on; injected in tests, which advance them by hand. */
  scheduleClock?: ScheduleClock;
  /**
   * Where spans go (one trace per turn, from the Slack event through model calls, the card, the
   * decision and tool runs). Default: the global provider, a no-op until an OpenTelemetry SDK is
   * registered (see the README's Tracing section).
   */
  tracerProvider?: TracerProvider;
  /**
   * How the Slack Web API client retries a failed call (default `SLACK_RETRY_CONFIG`: twice, after
   * 300 ms then 600 ms); injected in tests, which shorten the waits.
   */
  slackRetryConfig?: RetryOptions;
  /**
   * Default true (`COUNTERSIGN_COMMAND_SPAWNER`): command tools are started by a small spawner
   * process, so forking them costs this big process almost nothing; false spawns them from here.
   */
  commandSpawner?: boolean;
  /**
   * Command tools running at once in this process, at most (`COUNTERSIGN_MAX_RUNNING_COMMANDS`,
   * default 32); fewer start while memory is short (`command-slots.ts`). The rest wait in order.
   */
  maxRunningCommands?: number;
  /**
   * Slack's requests come from the Slack front thread over this channel, verified (and events and
   * clicks acked) there, instead of from an HTTP server of this bot's own (`COUNTERSIGN_SLACK_FRONT=thread`).
   */
  slackFront?: FrontChannel<FrontToBot, BotToFront>;
}

export interface Bot {
  app: App;
  store: StateStore;
  worker: ThreadWorker;
  /**
   * Starts serving Slack; in HTTP mode resolves with the bound port, and with the metrics' own port
   * when METRICS_PORT gives them one (`metricsPort`, `metricsHost` override it, e.g. 0 in tests).
   */
  start(options?: { port?: number; host?: string; metricsPort?: number; metricsHost?: string }): Promise<{ port?: number; metricsPort?: number }>;
  stop(): Promise<void>;
}

/** Wires the transport (Bolt), the state store, the agent and the tools into one running bot. */
export async function createBot(given: CreateBotOptions = {}): Promise<Bot> {
  const environment = given.environment ?? parseEnvironment(process.env);
  const config = given.config ?? (await loadConfigFile(environment.configPath));
  // Explicit options win over the environment's tuning knobs.
  const options: ResolvedOptions = { ...environment.tuning, ...given, environment, config };
  const logger = options.logger ?? createLogger({ level: environment.logLevel, secrets: environmentSecrets(environment) });
  warnIgnoredVariables(environment, logger);
  const now = options.now ?? Date.now;
  const commandSlots = createCommandSlots({ maxRunning: options.maxRunningCommands ?? DEFAULT_MAX_RUNNING_COMMANDS });
  const loaded = await loadTools({
    config,
    customTools: options.tools ?? [],
    logger,
    ...(options.env ? { env: options.env } : {}),
    commandRunner: options.commandSpawner === false ? 'direct' : 'spawner',
    commandSlots,
    onSourceProblem: (problem) => logger.warn({ event: 'tool-source-problem', source: problem.source }, problem.message),
    onSourceRecovered: (notice) => logger.info({ event: 'tool-source-recovered', source: notice.source }, notice.message),
  });
  // Live: MCP tools appear, change and disappear as their servers (re)connect.
  const tools = loaded.tools;
  try {
    return await assemble(options, { logger, now, tools, loaded, commandSlots });
  } catch (error) {
    await loaded.close();
    throw error;
  }
}

type ResolvedOptions = CreateBotOptions & { environment: EnvironmentConfig; config: CountersignConfig };

async function assemble(
  options: ResolvedOptions,
  { logger, now, tools, loaded, commandSlots }: { logger: Logger; now: () => number; tools: ToolDefinition[]; loaded: LoadedTools; commandSlots: CommandSlots },
): Promise<Bot> {
  const { environment, config } = options;

  // Pending approvals are read from the store when Prometheus scrapes (the store is built below).
  const prometheus = createPrometheusMetrics({ pendingApprovals: () => readPendingApprovals(store), now });
  const tracer = countersignTracer(options.tracerProvider);
  const onRedisError: RedisFailureListener = ({ kind }) => prometheus.metrics.redisFailed({ kind });
  const audit =
    options.audit ??
    (environment.redis === undefined
      ? createMemoryAuditLog({ logger })
      : createRedisAuditLog({ target: environment.redis, keyPrefix: STORE_KEY_PREFIX, ...redisShards(environment), logger, onRedisError }));
  const store = options.store ?? createStore({ environment, logger, audit, onRedisError, now });
  const onSlackApiFailure = (failure: SlackApiFailure) => prometheus.metrics.slackApiFailed(failure);
  const identity = await resolveBotIdentity(environment, onSlackApiFailure);
  const role = options.role ?? environment.role;
  const metricsWhere = metricsPlacement({ ...environment, role });
  const metricsOnMainPort = metricsWhere.kind === 'main-port';
  // `/healthz` names what the tools show is wrong with the config (an MCP exclude matching none of its server's tools) beside the store's risks.
  const health = withOtherRisks(store, () => loaded.warnings());
  const app = createSlackApp({
    settings: { ...environment.slack, ...identity },
    health,
    logger,
    ...(metricsOnMainPort ? { renderMetrics: prometheus.render } : {}),
    onSlackApiFailure,
    ...(options.slackRetryConfig ? { retryConfig: options.slackRetryConfig } : {}),
    ...(options.slackFront
      ? {
          receiver: createForwardedReceiver({
            front: options.slackFront,
            logger,
            route: (path) => (path !== '/metrics' ? healthReply(health) : metricsOnMainPort ? metricsReply(prometheus.render) : Promise.resolve(NOT_SERVED_HERE)),
          }),
        }
      : {}),
  });
  // Counted whichever receiver brings them, so stopping can wait for those still being taken in.
  const requests = createRequestsInFlight();
  app.use(requests.middleware);
  const messenger = createWebApiMessenger({ client: app.client, logger, streaming: environment.slack.streaming });
  const resolveGroups = createUsergroupMembers({ client: app.client, logger });
  const channelsOf = createChannelMembership({ client: app.client, logger });
  const approvalHook = resolveApprovalHook(options.onApprovalRequest);
  const historyTtlMs = wholeMilliseconds(config.history.ttlHours, 'h');
  // A fenced turn's clean-up, kept in the store when Slack fails it, and tried again by the sweep below.
  const takeBacks = createMessageTakeBacks({ store, messenger, logger, now, ...(options.keptRetries ? { schedule: options.keptRetries } : {}) });
  const conversation = createConversation({
    store,
    messenger,
    takeBacks,
    // Tool names such as `fs.read_file` are renamed on the wire: OpenAI refuses dots.
    model: withWireToolNames(options.model ?? createLanguageModel(environment.openai)),
    instructions: config.instructions,
    tools,
    policy: config.policy,
    toolProblems: () => loaded.problems(),
    resolveGroups,
    channelsOf,
    limits: {
      maxSteps: config.agent.maxSteps,
      modelTimeoutMs: options.modelTimeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS,
      ...(options.statusDelayMs === undefined ? {} : { statusDelayMs: options.statusDelayMs }),
      ...(options.cardRecordWaitMs === undefined ? {} : { cardRecordWaitMs: options.cardRecordWaitMs }),
      historyTtlMs,
      maxMessages: config.history.maxMessages,
      maxBytes: config.history.maxBytes,
    },
    logger,
    audit,
    botUserId: identity.botUserId,
    now,
    metrics: prometheus.metrics,
    ...(approvalHook ? { approvalHook } : {}),
    schedules: config.schedules,
    tracer,
  });
  const lockTtlMs = options.lockTtlMs ?? DEFAULT_LOCK_TTL_MS;
  const monitor = createLoadMonitor();
  // A process whose own loop acks Slack keeps few turns at once, so that loop stays free to ack. Behind
  // a front thread the acks are another thread's, and a worker serves no one: what bounds the turns
  // there is the CPU (through the loop's delay below), not a constant that a slow model would hit
  // with the CPU idle (8 turns of a 500 ms model: 16 turns per second).
  const loopAcksSlack = role !== 'worker' && options.slackFront === undefined;
  const defaultMaxTurns = loopAcksSlack ? DEFAULT_MAX_CONCURRENT_TURNS_ACKING_LOOP : DEFAULT_MAX_CONCURRENT_TURNS;
  // A worker's loop serves no one but its own turns: it may run later before it stops taking more.
  // Behind a front this loop still records every click's decision and updates its card, which
  // must not wait long behind turns.
  const defaultMaxDelayMs = role === 'worker' ? DEFAULT_MAX_EVENT_LOOP_DELAY_MS_WORKER : DEFAULT_MAX_EVENT_LOOP_DELAY_MS_SERVING;
  const limits = { monitor, maxConcurrent: options.maxConcurrentTurns ?? defaultMaxTurns, maxEventLoopDelayMs: options.maxEventLoopDelayMs ?? defaultMaxDelayMs };
  // Every work item runs through the thread worker's gate, a thread taken from receivers too (after
  // the puller's gate let it be taken): that gate alone counts and times the turns, the puller's
  // adds what it holds before its drain starts.
  const itemGate = createLoadGate({ ...limits, onAdmit: (waitedMs) => prometheus.metrics.turnAdmitted({ waitedMs }) });
  const pullGate = createLoadGate(limits);
  prometheus.observeCommandLoad(() => ({ running: commandSlots.active(), waiting: commandSlots.waiting() }));
  prometheus.observeTurnLoad(() => ({ running: itemGate.active(), waiting: itemGate.waiting() + pullGate.waiting() }));
  const worker = createThreadWorker({
    store,
    handle: (item, lease, prefetched) => conversation.handle(item, lease, prefetched),
    logger,
    lockTtlMs,
    gate: itemGate,
    handOff: role === 'receiver',
  });
  // Receivers run no turns; everyone else takes the threads receivers hand off.
  const puller = role === 'receiver' ? undefined : createWorkPuller({ store, worker, gate: pullGate, logger });
  // The config in force's answer for a waiting call's input: clicks, escalation notices and App Home's list are judged by it too.
  const evaluateInput: CurrentEvaluation = ({ step, call, input }) =>
    evaluateCallPolicy({
      policy: config.policy,
      definition: loaded.find(call.toolName),
      toolName: call.toolName,
      input,
      context: { requesterId: step.requesterId, teamId: step.teamId, channel: step.channel, threadTs: step.threadTs },
    });
  // A card Slack would not update, kept in the store and drawn again (by the sweep below too), with
  // the copies its routing lacks first (a decision whose outcome was not known posts none itself).
  const cardRefreshes = createCardRefreshes({
    store,
    messenger,
    takeBacks,
    logger,
    now,
    ...(options.keptRetries ? { schedule: options.keptRetries } : {}),
    copies: (step) => withMissingCopies({ store, messenger, takeBacks, logger, step, currentEvaluation: evaluateInput, failure: 'could not post copies of an approval card drawn again' }),
  });
  // What this process's recovery sweeps have said already (`recoverStalledWork`).
  const recoveryReported = { newerRelease: false };
  const sweeper = createExpirySweeper({
    store,
    messenger,
    worker,
    logger,
    now,
    currentEvaluation: evaluateInput,
    resolveGroups,
    metrics: prometheus.metrics,
    takeBacks,
    ...(options.sweepIntervalMs ? { intervalMs: options.sweepIntervalMs } : {}),
    // Cards are drawn again by every process (a receiver's clicks update cards too); the rest only where turns run.
    alsoRun: async ({ stopping }) =>
      void (await Promise.all([
        cardRefreshes.retryDue({ stopping }),
        ...(role === 'receiver' ? [] : [recoverStalledWork({ store, worker, now, graceMs: lockTtlMs, logger, stopping, reported: recoveryReported }), takeBacks.retryDue({ stopping })]),
      ])),
  });
  // Schedules start turns, so only processes that run turns keep their timers; the claim in Redis
  // makes each firing one turn however many of them there are.
  const schedules =
    role === 'receiver' || config.schedules.length === 0
      ? undefined
      : createScheduledTurns({
          schedules: config.schedules,
          store,
          poster: createChannelPoster(app.client),
          notices: messenger,
          followTtlMs: historyTtlMs,
          worker,
          teamId: createTeamIdLookup(app.client),
          logger,
          ...(options.scheduleClock ? { clock: options.scheduleClock } : {}),
        });
  registerListeners(app, {
    ...(options.storeWaitMs === undefined ? {} : { storeWaitMs: options.storeWaitMs }),
    store,
    worker,
    messenger,
    decider: createCallDecider({
      store,
      messenger,
      worker,
      logger,
      audit,
      now,
      resolveGroups,
      metrics: prometheus.metrics,
      tracer,
      expireNow: (stepId, expireOptions) => sweeper.expireNow(stepId, expireOptions),
      evaluateInput,
      cardRefreshes,
      takeBacks,
    }),
    toolSchemas: createToolSchemas({ definitions: tools }),
    validator: createJsonSchemaValidator(),
    audit,
    resolveGroups,
    channelsOf,
    currentEvaluation: evaluateInput,
    now,
    botUserId: identity.botUserId,
    followTtlMs: historyTtlMs,
    logger,
    tracer,
  });

  let healthServer: Server | undefined;
  let metricsServer: Server | undefined;
  /** Bolt's own HTTP server (inline, not Socket Mode): its receiver closes it, bounded as the others. */
  let slackServer: Server | undefined;
  return {
    app,
    store,
    worker,
    async start(startOptions = {}) {
      warnOfStoreRisks(store, logger);
      sweeper.start();
      puller?.start();
      schedules?.start();
      const port = startOptions.port ?? environment.slack.port;
      // Before Slack's port, so a METRICS_PORT that cannot be taken fails the start before any request is acked.
      let metricsPort: number | undefined;
      if (metricsWhere.kind === 'own-port') {
        const host = startOptions.metricsHost ?? metricsWhere.host;
        const listening = await startMetricsServer({ store: health, renderMetrics: prometheus.render, port: startOptions.metricsPort ?? metricsWhere.port, ...(host === undefined ? {} : { host }) });
        metricsServer = listening.server;
        metricsPort = listening.port;
      }
      const notice = metricsPlacementNotice(metricsWhere, { ...environment, role });
      if (notice) logger[notice.level]({ event: 'metrics-placement', metrics: describeMetricsPlacement(metricsWhere, metricsPort) }, notice.message);
      const started = { tools: tools.map((tool) => tool.name), metrics: describeMetricsPlacement(metricsWhere, metricsPort) };
      const withMetricsPort = <T extends object>(result: T) => (metricsPort === undefined ? result : { ...result, metricsPort });
      if (role === 'worker') {
        healthServer = createHealthServer({ store: health, ...(metricsOnMainPort ? { renderMetrics: prometheus.render } : {}), servedBy: 'a countersign worker' });
        const server = healthServer;
        await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, startOptions.host, resolve));
        const bound = (server.address() as AddressInfo).port;
        logger.info({ event: 'started', mode: 'worker', port: bound, ...started }, 'countersign worker running turns');
        return withMetricsPort({ port: bound });
      }
      if (options.slackFront) {
        await app.start();
        logger.info({ event: 'started', mode: 'front-thread', role, ...started }, 'countersign serving Slack through its front thread');
        return withMetricsPort({});
      }
      if (environment.slack.socketMode) {
        await app.start();
        logger.info({ event: 'started', mode: 'socket', ...started }, 'countersign connected over Socket Mode');
        return withMetricsPort({});
      }
      const server = (await app.start({ port, ...(startOptions.host ? { host: startOptions.host } : {}) }, PUBLIC_SERVER_TIMEOUTS)) as Server;
      // Bolt's receiver made it; it listens from the end of this await, before any request is read.
      slackServer = closeConnectionsAtStop(server);
      const bound = (server.address() as AddressInfo).port;
      logger.info({ event: 'started', mode: 'http', role, port: bound, ...started }, 'countersign listening');
      return withMetricsPort({ port: bound });
    },
    async stop() {
      // First: a running drain hands its thread back once its turn ends rather than start the next
      // item, which a live replica may have queued after this SIGTERM (a turn the stop would cut).
      worker.stopTaking();
      // All at once, so none takes new work while another's stop is awaited: the sweep takes no stalled
      // thread once the puller takes no hand-off, and Slack's listener (or Socket Mode) takes no new
      // request while a firing or a sweep waits out a rate limit's Retry-After: one acked then would
      // be this process's own, its turn started after SIGTERM. The servers each bounded (`closeServer`):
      // a client that never finishes its request must not hold the stop.
      await Promise.all([
        schedules?.stop(),
        puller?.stop(),
        sweeper.stop(),
        metricsServer && closeServer(metricsServer),
        healthServer ? closeServer(healthServer) : slackServer ? closeServer(slackServer, { close: () => app.stop() }) : app.stop(),
      ]);
      // A message Slack has its 200 for may still be in its listener's store round trips, its work
      // not yet queued: the store must not close under it. Bounded, in case the store is away.
      if ((await requests.settled({ timeoutMs: STOP_REQUESTS_WAIT_MS })) === 'timed-out') {
        logger.warn({ event: 'stop-requests-unfinished', requests: requests.count() }, 'Slack requests still being handled; stopping once the running turns end');
      }
      // Hands back at once a lock a click's decision took whose drain has not begun (its card update
      // outlasted the wait above), rather than close the store with the lock held.
      await worker.idle();
      // Its last wait for a hand-off (a second at most) may catch a thread a drain just handed back:
      // given back to the ready list, for a live worker, before the store closes.
      await puller?.idle();
      await store.close();
      await audit.close();
      await loaded.close();
      monitor.close();
    },
  };
}

const DEFAULT_MODEL_TIMEOUT_MS = 120_000;
/** The front thread's answer to `/metrics` when it is not served on Slack's port (the front 404s it first). */
const NOT_SERVED_HERE: HttpReply = { status: 404, contentType: 'application/json', body: JSON.stringify({ error: 'GET /metrics is served on METRICS_PORT' }) };
/** How long a stop waits for Slack requests still being handled before it closes the store. */
const STOP_REQUESTS_WAIT_MS = 10_000;
const DEFAULT_LOCK_TTL_MS = 30_000;
const DEFAULT_MAX_CONCURRENT_TURNS = 1_000;
const DEFAULT_MAX_CONCURRENT_TURNS_ACKING_LOOP = 8;
const DEFAULT_MAX_EVENT_LOOP_DELAY_MS_SERVING = 100;
const DEFAULT_MAX_EVENT_LOOP_DELAY_MS_WORKER = 500;

const redisShards = (environment: EnvironmentConfig) => (environment.redisShards === undefined ? {} : { shards: environment.redisShards });
/** A misspelled COUNTERSIGN_* name is refused by parseEnvironment; one far from every known name is only said. */
function warnIgnoredVariables(environment: EnvironmentConfig, logger: Logger): void {
  const names = environment.ignoredVariables;
  if (names === undefined || names.length === 0) return;
  logger.warn({ event: 'environment-variables-ignored', variables: names }, ignoredVariablesMessage(names));
}

/**
 * The store's server settings that could lose what the bot wrote (an RDB-only Redis: an approved call
 * may run twice after its restart), once it answers. Not awaited: a Redis still away at start-up
 * delays nothing, and `/healthz` names them once it is read.
 */
function warnOfStoreRisks(store: StateStore, logger: Logger): void {
  store.risks().then(
    (risks) => {
      for (const risk of risks) logger.warn({ event: risk.code }, risk.message);
    },
    () => {},
  );
}

/** COUNTERSIGN_REDIS_WAIT_*: only the store runs tools' markers, so only it gets them. */
const replicaWait = (environment: EnvironmentConfig) => ({
  ...(environment.redisWaitReplicas !== undefined && { waitReplicas: environment.redisWaitReplicas }),
  ...(environment.redisWaitTimeoutMs !== undefined && { waitTimeoutMs: environment.redisWaitTimeoutMs }),
});

/** Shared by the store and the audit streams; `npm run audit` reads them. */
const STORE_KEY_PREFIX = 'countersign:';

/** `now`: the memory store's clock (one process, one clock); Redis judges deadlines by its own `TIME`. */
function createStore({ environment, logger, audit, onRedisError, now }: { environment: EnvironmentConfig; logger: Logger; audit: AuditLog; onRedisError: RedisFailureListener; now: () => number }): StateStore {
  if (environment.redis !== undefined) return createRedisStore({ target: environment.redis, keyPrefix: STORE_KEY_PREFIX, ...redisShards(environment), ...replicaWait(environment), auditLogger: logger, onRedisError });
  logger.warn(
    { event: 'memory-store' },
    'REDIS_URL is not set: using an in-memory store. Pending approvals will not survive a restart and are not shared between bot processes.',
  );
  return createMemoryStore({ audit, now });
}

/** The workspace of the bot token, asked once (`auth.test`), for the threads scheduled turns start. */
function createTeamIdLookup(client: WebClient): () => Promise<string> {
  let teamId: Promise<string> | undefined;
  return () => {
    teamId ??= client.auth.test().then(
      (identity) => {
        if (!identity.team_id) throw new SlackResponseError({ method: 'auth.test', missing: 'team id' });
        return identity.team_id;
      },
      (error: unknown) => {
        throw new SlackCallError({ method: 'auth.test', cause: error });
      },
    );
    // A failure is asked again at the next firing rather than remembered.
    teamId.catch(() => {
      teamId = undefined;
    });
    return teamId;
  };
}

/** Bolt needs the bot's ids; asking Slack once here keeps Bolt from asking on every event. */
async function resolveBotIdentity(environment: EnvironmentConfig, onSlackApiFailure: (failure: SlackApiFailure) => void): Promise<{ botUserId: string; botId: string }> {
  const { botUserId, botId } = environment.slack;
  if (botUserId !== undefined && botId !== undefined) return { botUserId, botId };
  const client = new WebClient(environment.slack.botToken, {
    ...(environment.slack.apiUrl === undefined ? {} : { slackApiUrl: environment.slack.apiUrl }),
    retryConfig: SLACK_RETRY_CONFIG,
    fetch: createObservedSlackFetch({ onFailure: onSlackApiFailure }),
  });
  const identity = await client.auth.test().catch((error: unknown) => {
    throw new SlackCallError({ method: 'auth.test', cause: error });
  });
  if (!identity.user_id || !identity.bot_id) throw new SlackResponseError({ method: 'auth.test', missing: 'bot user id and bot id' });
  return { botUserId: identity.user_id, botId: identity.bot_id };
}
