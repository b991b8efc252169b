import { describeDeployModel } from './deploy-commands.js';

/**
 * Model-based test of the countersignature across deploys while cards wait (see
 * `deploy-commands.ts`): a deploy that changes or removes the tool while a card waits, the
 * approval hook's approvals and denials followed by a deploy that forbids automatic approval or
 * removes or renames the hook, a deploy that shortens a rule's expiry (or raises its quorum) with
 * clicks before and after the new deadline, and edits interleaved with all of them.
 */
describeDeployModel({ crashes: false });
