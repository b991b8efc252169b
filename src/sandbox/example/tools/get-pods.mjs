// get_pods: what `kubectl get pods` would show in the simulated cluster. Read-only.
import { argumentsOf, deploymentNames, deploymentOrExit, podNames, printWouldRun } from './simulated-cluster.mjs';

const { namespace, region } = argumentsOf(['namespace', 'region']);
printWouldRun({ region, kubectl: ['get', 'pods', '-n', namespace] });
const rows = deploymentNames().flatMap((name) => {
  const { replicas } = deploymentOrExit({ name, namespace });
  return podNames({ name, namespace, region, replicas }).map((pod, index) => [pod, '1/1', 'Running', String(index), `${3 + index}d${2 * index + 1}h`]);
});
const table = [['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'], ...rows];
const widths = table[0].map((_, column) => Math.max(...table.map((row) => row[column].length)));
for (const row of table) console.log(row.map((cell, column) => cell.padEnd(widths[column] + 3)).join('').trimEnd());
