// deploy_version: a simulated `kubectl set image` followed by its rollout.
import { argumentsOf, deploymentOrExit, printRollout, printWouldRun } from './simulated-cluster.mjs';

const { service, version, namespace, region } = argumentsOf(['service', 'version', 'namespace', 'region']);
const image = `registry.example.com/${service}:${version.replace(/^v/, '')}`;
printWouldRun({ region, kubectl: ['set', 'image', `deployment/${service}`, `${service}=${image}`, '-n', namespace] });
const current = deploymentOrExit({ name: service, namespace });
console.log(`deployment.apps/${service} image updated (${current.version} → ${version.replace(/^v/, '')})`);
await printRollout({ name: service, replicas: current.replicas });
