import type { ActionIntent } from './demo-request.js';
import { DEMO_DEFAULTS } from './demo-tool-calls.js';

/**
 * What the demo model says it will do, e.g. "restart `worker` in staging (us-east-1)". Without
 * `placement`, just the action: "restart `worker`", for "which region should I restart `worker` in?".
 */
export function describeIntent(intent: ActionIntent, { placement = true }: { placement?: boolean } = {}): string {
  const where = placement ? ` ${intent.kind === 'deploy' ? 'to' : 'in'} ${intent.namespace ?? DEMO_DEFAULTS.namespace}${intent.region === undefined ? '' : ` (${intent.region})`}` : '';
  switch (intent.kind) {
    case 'status':
      return `check the pods${where}`;
    case 'restart':
      return `restart \`${intent.service ?? DEMO_DEFAULTS.service}\`${where}`;
    case 'scale':
      return `scale \`${intent.deployment ?? DEMO_DEFAULTS.deployment}\` to ${intent.replicas ?? DEMO_DEFAULTS.replicas} replicas${where}`;
    case 'deploy':
      return `deploy \`${intent.service ?? DEMO_DEFAULTS.deployment}\` ${intent.version ?? DEMO_DEFAULTS.version}${where}`;
  }
}
