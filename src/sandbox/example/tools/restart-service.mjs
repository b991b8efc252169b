// restart_service: a simulated `kubectl rollout restart`.
import { argumentsOf, deploymentOrExit, printRollout, printWouldRun } from './simulated-cluster.mjs';

const { service, namespace, region } = argumentsOf(['service', 'namespace', 'region']);
printWouldRun({ region, kubectl: ['rollout', 'restart', `deployment/${service}`, '-n', namespace] });
const { replicas } = deploymentOrExit({ name: service, namespace });
console.log(`deployment.apps/${service} restarted`);
await printRollout({ name: service, replicas });
