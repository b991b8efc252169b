/**
 * What the demo model understands of a request: a few keywords and simple patterns, no language
 * model. A message can ask for several things ("check the pods, then restart the worker"): each
 * clause becomes one intent, in order. Values the text does not give are left out, for the
 * caller's defaults.
 */

export interface Placement {
  namespace?: string;
  region?: string;
}

export type DemoIntent =
  | ({ kind: 'status' } & Placement)
  | ({ kind: 'restart'; service?: string } & Placement)
  | ({ kind: 'scale'; deployment?: string; replicas?: number } & Placement)
  | ({ kind: 'deploy'; service?: string; version?: string } & Placement)
  | { kind: 'ask'; about: 'region' | 'namespace' };

export type ActionIntent = Exclude<DemoIntent, { kind: 'ask' }>;

// A full stop only before a space or the end: version numbers (1.5.0) have dots too.
const CLAUSE_SEPARATOR = /\s*(?:[,;!?]|\.(?=\s|$)|\band then\b|\bthen\b|\band\b)\s*/i;
const ASK = /\bask me\b|\bwhich (region|namespace|environment|cluster)\b/g;
const NAME = '([a-z0-9][a-z0-9-]*)';
// Words that can follow a verb without being the name of a deployment.
const NOT_A_NAME = new Set(['the', 'a', 'an', 'my', 'our', 'service', 'deployment', 'it', 'everything', 'in', 'on', 'to', 'up', 'down', 'prod', 'production', 'staging', 'stage', 'version', 'all', 'pods']);

/** The intents of `text` (a Slack message, mentions and all), in the order they are written. */
export function parseDemoRequest(text: string): DemoIntent[] {
  const cleaned = text
    .replace(/<@[A-Z0-9]+>(\s*says:)?/g, ' ')
    .toLowerCase()
    .replace(/[’`*_~]/g, (character) => (character === '’' ? "'" : ''));
  const wholeMessage = placementOf(cleaned);
  const intents: DemoIntent[] = [];
  for (const clause of cleaned.split(CLAUSE_SEPARATOR).filter((part) => part.trim() !== '')) {
    // "ask me which region to restart the worker in": the question first, then what it is for.
    if (new RegExp(ASK.source).test(clause)) intents.push({ kind: 'ask', about: /\b(namespace|environment)\b/.test(clause) ? 'namespace' : 'region' });
    const intent = actionIntent(clause.replace(ASK, ' '), wholeMessage);
    if (intent !== undefined) intents.push(intent);
  }
  return intents;
}

function actionIntent(clause: string, wholeMessage: Placement): ActionIntent | undefined {
  // A clause that names no place takes the message's: "restart the worker and check the pods in prod".
  const placement = { ...wholeMessage, ...placementOf(clause) };
  const scale = new RegExp(`\\bscale\\b(?:\\s+(?:up|down))?(?:\\s+the)?(?:\\s+deployment)?\\s+${NAME}`).exec(clause);
  if (/\bscale\b/.test(clause)) {
    const replicas = /\bto\s+(\d+)\b/.exec(clause)?.[1] ?? /\b(\d+)\s*(?:replicas?|pods?|instances?|copies)\b/.exec(clause)?.[1];
    return withDefined({ kind: 'scale' as const, deployment: nameOrUndefined(scale?.[1]), replicas: replicas === undefined ? undefined : Number(replicas), ...placement });
  }
  if (/\b(restart|bounce|reboot|recycle)\b/.test(clause)) {
    const service = new RegExp(`\\b(?:restart|bounce|reboot|recycle)(?:\\s+(?:the|my|our))?(?:\\s+(?:service|deployment))?\\s+${NAME}`).exec(clause)?.[1];
    return withDefined({ kind: 'restart' as const, service: nameOrUndefined(service), ...placement });
  }
  if (/\b(deploy|release|ship|upgrade|roll out)\b/.test(clause)) {
    const service = new RegExp(`\\b(?:deploy|release|ship|upgrade|roll out)(?:\\s+(?:the|my|our))?\\s+${NAME}`).exec(clause)?.[1];
    const version = /\bv?(\d+\.\d+\.\d+)\b/.exec(clause)?.[1];
    return withDefined({ kind: 'deploy' as const, service: nameOrUndefined(service), version, ...placement });
  }
  if (/\b(status|pods?|running|health|healthy|up)\b|\bwhat'?s (running|up)\b/.test(clause)) {
    return withDefined({ kind: 'status' as const, ...placement });
  }
  return undefined;
}

function placementOf(text: string): Placement {
  const namespace = /\b(prod|production)\b/.test(text) ? 'prod' : /\b(staging|stage|stg)\b/.test(text) ? 'staging' : undefined;
  const region = /\b([a-z]{2}-[a-z]+-\d)\b/.exec(text)?.[1];
  return withDefined({ namespace, region });
}

function nameOrUndefined(word: string | undefined): string | undefined {
  // A version number is not a name: "deploy 1.5.0 to staging".
  return word === undefined || NOT_A_NAME.has(word) || /^v?\d/.test(word) ? undefined : word;
}

/** Drops keys whose value is undefined: an intent lists only what the text said. */
function withDefined<VALUE extends object>(value: VALUE): VALUE {
  return Object.fromEntries(Object.entries(value).filter(([, each]) => each !== undefined)) as VALUE;
}
