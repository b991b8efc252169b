/**
 * Imported first by the entry point, for its side effect: on a Node.js that is too old it says so
 * and exits before any other module is evaluated. ES modules are evaluated in import order, depth
 * first, so this runs before the Slack and HTTP libraries, which otherwise crash on Node 20 with
 * an error from deep inside undici that names no version. It must import nothing but the check.
 */
import { nodeVersionProblem } from './node-version-problem.js';

const problem = nodeVersionProblem(process.versions.node);
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
