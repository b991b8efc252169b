import { describeDeployModel } from './deploy-commands.js';

/**
 * The deploy model (`deploy-commands.ts`) with resumes that die right after their claim, as a
 * deploy's kill of the old process does (the `after-claim` fault point of the end-to-end tests):
 * the resume item is offered again and the process that takes it, possibly on the new config,
 * finishes the turn (`recoverInterruptedResume`). The call it then runs must still hold under the
 * config in force, as Try again requires of the same approval (`judgeCarriedApprovals`).
 */
describeDeployModel({ crashes: true });
