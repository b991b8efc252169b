// The pretend cluster behind the sandbox's example tools. Nothing here contacts anything: each tool
// prints the kubectl command it would run and output shaped like kubectl's, so the sandbox can be
// tried on any machine. Plain JavaScript run by `node` (argv only, never a shell), not compiled.

/** The deployments every namespace of every region has, with the image version they run. */
const DEPLOYMENTS = {
  api: { replicas: 3, version: '1.4.2' },
  web: { replicas: 2, version: '3.1.0' },
  worker: { replicas: 2, version: '2.0.1' },
};

/** argv after `node script.mjs`, in the order the config's command template gives them. */
export function argumentsOf(names) {
  const values = process.argv.slice(2);
  return Object.fromEntries(names.map((name, index) => [name, values[index] ?? '']));
}

/** Says this is a simulation and what would have run, in the form an operator would type it. */
export function printWouldRun({ region, kubectl }) {
  console.log('(simulated: no cluster was contacted)');
  console.log(`would run: kubectl --context ${region} ${kubectl.join(' ')}`);
}

/** The deployment, or kubectl's not-found error and exit code 1, so a failed call can be tried too. */
export function deploymentOrExit({ name, namespace }) {
  const deployment = Object.hasOwn(DEPLOYMENTS, name) ? DEPLOYMENTS[name] : undefined;
  if (deployment !== undefined) return deployment;
  console.error(`Error from server (NotFound): deployments.apps "${name}" not found in namespace "${namespace}"`);
  console.error(`(the simulated cluster has: ${Object.keys(DEPLOYMENTS).join(', ')})`);
  process.exit(1);
}

export function deploymentNames() {
  return Object.keys(DEPLOYMENTS);
}

/** Pod names that look like Kubernetes' and stay the same for the same deployment and place. */
export function podNames({ name, namespace, region, replicas }) {
  const seed = hash(`${region}/${namespace}/${name}`);
  const template = kubernetesRandom({ seed, length: 10 });
  return Array.from({ length: replicas }, (_, index) => `${name}-${template}-${kubernetesRandom({ seed: hash(`${seed}:${index}`), length: 5 })}`);
}

/** A rollout's last lines, after a pause so the sandbox shows the call running. */
export async function printRollout({ name, replicas }) {
  await new Promise((resolve) => setTimeout(resolve, 400));
  console.log(`Waiting for deployment "${name}" rollout to finish: 1 of ${replicas} updated replicas are available...`);
  console.log(`deployment "${name}" successfully rolled out`);
}

function hash(text) {
  let value = 2166136261;
  for (const character of text) value = Math.imul(value ^ character.charCodeAt(0), 16777619) >>> 0;
  return value;
}

// Kubernetes draws generated name parts from this alphabet (no vowels, no look-alike digits).
function kubernetesRandom({ seed, length }) {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let text = '';
  let value = seed;
  for (let count = 0; count < length; count += 1) {
    if (value < alphabet.length) value = hash(`${seed}:${count}`);
    text += alphabet[value % alphabet.length];
    value = Math.floor(value / alphabet.length);
  }
  return text;
}
