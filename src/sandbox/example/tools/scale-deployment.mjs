// scale_deployment: a simulated `kubectl scale`.
import { argumentsOf, deploymentOrExit, printWouldRun } from './simulated-cluster.mjs';

const { deployment, replicas, namespace, region } = argumentsOf(['deployment', 'replicas', 'namespace', 'region']);
printWouldRun({ region, kubectl: ['scale', `deployment/${deployment}`, `--replicas=${replicas}`, '-n', namespace] });
const current = deploymentOrExit({ name: deployment, namespace });
console.log(`deployment.apps/${deployment} scaled (${current.replicas} → ${replicas} replicas)`);
