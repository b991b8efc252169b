import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryAuditLog } from '../../audit/memory-audit-log.js';
import { inputHash } from '../../approvals/input-version.js';
import { evaluation, makeStep } from '../../approvals/pending-step.test-support.js';
import type { PendingStep } from '../../approvals/pending-step.js';
import type { OrganisationMembership } from '../organisation-membership.js';
import { APPROVAL_ACTION_IDS, decodeCallFormMetadata } from '../blocks/action-ids.js';
import { cardClick, failingStore, fakeBoltApp, recordingMessenger, storeWith } from './bolt-listener.test-support.js';
import { registerCallModalButton } from './call-modal-button.js';
import { UNREADABLE_CALL_TEXT } from './read-call.js';

const logger = pino({ level: 'silent' });

function register(options: {
  store: Parameters<typeof registerCallModalButton>[1]['store'];
  onlyForCurrentInput?: boolean;
  membership?: Awaited<ReturnType<OrganisationMembership['of']>>;
  audited?: boolean;
  /** What the form's `view` answers instead of a modal. */
  viewAnswer?: string | { refused: { code: string; reason: string } };
}) {
  const { app, action } = fakeBoltApp();
  const { messenger, ephemerals } = recordingMessenger();
  const opened: Array<{ privateMetadata: string; input: unknown }> = [];
  const audit = createMemoryAuditLog({ logger });
  registerCallModalButton(app, {
    actionId: APPROVAL_ACTION_IDS.grant,
    buttonLabel: 'Approve & allow…',
    store: options.store,
    messenger,
    logger,
    ...(options.onlyForCurrentInput ? { onlyForCurrentInput: true } : {}),
    ...(options.membership ? { organisationMembership: { of: async () => options.membership! } as unknown as OrganisationMembership } : {}),
    ...(options.audited === false ? {} : { refusalAudit: { audit, action: 'grant' } }),
    view: ({ call, privateMetadata }) => {
      if (options.viewAnswer !== undefined) return options.viewAnswer;
      opened.push({ privateMetadata, input: call.input });
      return { type: 'modal', title: { type: 'plain_text', text: 'Form' }, blocks: [] };
    },
  });
  const refusals = async () =>
    (await audit.read({ sinceMs: 0 })).map((event) => {
      const { type, teamId, stepId, approvalId, toolName, userId, action: name, code } = event as unknown as Record<string, unknown>;
      return { type, teamId, stepId, approvalId, toolName, userId, action: name, code };
    });
  return { click: action(APPROVAL_ACTION_IDS.grant), ephemerals, opened, refusals };
}

/** A staging restart that U0BOB edited to prod: version 1 is current, a card from before shows version 0. */
function editedToProd(): PendingStep {
  const step = makeStep([{ approvalId: 'apv1', input: { service: 'worker', namespace: 'staging' } }]);
  const prod = { service: 'worker', namespace: 'prod' };
  step.calls[0]!.versions!.push({ number: 1, input: prod, inputHash: inputHash(prod), at: step.createdAt + 1, policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0SRELEAD' }] }), editedBy: 'U0BOB' });
  return step;
}

describe('a card button that opens a modal', () => {
  it('tells the clicker privately when Redis cannot be read, instead of doing nothing', async () => {
    const { click, ephemerals, opened } = register({ store: failingStore() });
    const { args, views } = cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: 'step01', approvalId: 'apv1', version: 0 } });
    await click(args);
    expect(ephemerals).toEqual([{ userId: 'U0BOB', text: UNREADABLE_CALL_TEXT }]);
    expect(opened).toEqual([]);
    expect(views.open).not.toHaveBeenCalled();
  });

  it('opens no approving form from a card older than the current input, and says the input changed', async () => {
    const step = editedToProd();
    const { click, ephemerals, opened } = register({ store: storeWith(step), onlyForCurrentInput: true });
    const { args, views } = cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 }, userId: 'U0SRELEAD' });
    await click(args);
    expect(ephemerals).toEqual([{ userId: 'U0SRELEAD', text: expect.stringContaining('The input changed since you looked: it was edited by <@U0BOB> and is now version 2') }]);
    expect(opened).toEqual([]);
    expect(views.open).not.toHaveBeenCalled();
  });

  it('opens an approving form from a card showing the current input, remembering that version', async () => {
    const step = editedToProd();
    const { click, ephemerals, opened } = register({ store: storeWith(step), onlyForCurrentInput: true });
    const { args, views } = cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: step.stepId, approvalId: 'apv1', version: 1 }, userId: 'U0SRELEAD' });
    await click(args);
    expect(ephemerals).toEqual([]);
    expect(views.open).toHaveBeenCalledOnce();
    expect(opened.map(({ input }) => input)).toEqual([{ service: 'worker', namespace: 'prod' }]);
    expect(decodeCallFormMetadata(opened[0]!.privateMetadata)?.version).toBe(1);
  });

  it('remembers the version the card showed, not the current one, in a form that does not approve', async () => {
    const step = editedToProd();
    const { click, opened } = register({ store: storeWith(step) });
    const { args } = cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 } });
    await click(args);
    // A submit naming version 1 would be judged as if its clicker had seen the prod input.
    expect(decodeCallFormMetadata(opened[0]!.privateMetadata)?.version).toBe(0);
  });
});

describe('a refused click on a card button that opens a form that acts', () => {
  const refusedBy = (step: PendingStep, userId: string, code: string) => [
    { type: 'action-refused', teamId: step.teamId, stepId: step.stepId, approvalId: 'apv1', toolName: step.calls[0]!.toolName, userId, action: 'grant', code },
  ];

  it('is audited when the input changed since the card was drawn', async () => {
    const step = editedToProd();
    const { click, opened, refusals } = register({ store: storeWith(step), onlyForCurrentInput: true });
    await click(cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 }, userId: 'U0SRELEAD' }).args);
    expect(opened).toEqual([]);
    expect(await refusals()).toEqual(refusedBy(step, 'U0SRELEAD', 'stale'));
  });

  it('is audited when the clicker is of another organisation, or could not be checked', async () => {
    for (const [membership, code] of [['external', 'external-user'], ['unverified', 'membership-unverified']] as const) {
      const step = makeStep([{ approvalId: 'apv1' }]);
      const { click, ephemerals, opened, refusals } = register({ store: storeWith(step), membership });
      await click(cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 }, userId: 'U0PARTNER' }).args);
      expect(opened).toEqual([]);
      expect(ephemerals).toHaveLength(1);
      expect(await refusals()).toEqual(refusedBy(step, 'U0PARTNER', code));
    }
  });

  it('is audited when it comes from another channel or workspace', async () => {
    const step = makeStep([{ approvalId: 'apv1' }]);
    const { click, ephemerals, refusals } = register({ store: storeWith(step) });
    await click(cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 }, channel: 'C0ELSEWHERE' }).args);
    await click(cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 }, teamId: 'T0OTHER' }).args);
    expect(ephemerals.map(({ text }) => text)).toEqual(['This request belongs to another channel, so nothing changed.', 'This request belongs to another channel, so nothing changed.']);
    expect(await refusals()).toEqual([...refusedBy(step, 'U0BOB', 'wrong-channel'), ...refusedBy(step, 'U0BOB', 'wrong-workspace')]);
  });

  it('from a copy of the card in #approvals the step does not record, says the copy is out of date, opens no form and is audited', async () => {
    const policy = evaluation({ approvers: [{ kind: 'user', userId: 'U0BOB' }], notify: { thread: true, channels: ['C0APPROVALS'], dmApprovers: false } });
    const step = { ...makeStep([{ approvalId: 'apv1', policy }]), cardLink: 'https://example.slack.com/archives/C0THREAD/p1' };
    const { click, ephemerals, opened, refusals } = register({ store: storeWith(step) });
    await click(cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 }, channel: 'C0APPROVALS' }).args);
    expect(opened).toEqual([]);
    expect(ephemerals.map(({ text }) => text)).toEqual([`This copy of the request is out of date, so nothing changed: use its card in <#${step.channel}> (<https://example.slack.com/archives/C0THREAD/p1|open the thread>).`]);
    expect(await refusals()).toEqual(refusedBy(step, 'U0BOB', 'wrong-channel'));
  });

  it('is audited when the call was already decided', async () => {
    const step = makeStep([{ approvalId: 'apv1' }]);
    step.decisions.apv1 = { outcome: 'approved', userId: 'U0ALICE', at: step.createdAt + 1 } as (typeof step.decisions)[string];
    const { click, refusals } = register({ store: storeWith(step) });
    await click(cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 } }).args);
    expect(await refusals()).toEqual(refusedBy(step, 'U0BOB', 'already-decided'));
  });

  it("is audited when the form's view refuses the clicker (someone else's question), and not when it only explains", async () => {
    const step = makeStep([{ approvalId: 'apv1' }]);
    const refused = register({ store: storeWith(step), viewAnswer: { refused: { code: 'not-requester', reason: 'Only <@U0ALICE> can answer this question, so nothing changed.' } } });
    await refused.click(cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 } }).args);
    expect(refused.ephemerals).toEqual([{ userId: 'U0BOB', text: 'Only <@U0ALICE> can answer this question, so nothing changed.' }]);
    expect(await refused.refusals()).toEqual(refusedBy(step, 'U0BOB', 'not-requester'));
    const explained = register({ store: storeWith(step), viewAnswer: 'The policy does not allow grants for this tool.' });
    await explained.click(cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 } }).args);
    expect(explained.ephemerals).toHaveLength(1);
    expect(await explained.refusals()).toEqual([]);
  });

  it('is not audited for a read-only modal, nor when Redis could not be read', async () => {
    const step = makeStep([{ approvalId: 'apv1' }]);
    const readOnly = register({ store: storeWith(step), audited: false, membership: 'external' });
    await readOnly.click(cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: step.stepId, approvalId: 'apv1', version: 0 } }).args);
    expect(readOnly.ephemerals).toHaveLength(1);
    expect(await readOnly.refusals()).toEqual([]);
    const unreadable = register({ store: failingStore() });
    await unreadable.click(cardClick({ actionId: APPROVAL_ACTION_IDS.grant, reference: { stepId: 'step01', approvalId: 'apv1', version: 0 } }).args);
    expect(unreadable.ephemerals).toEqual([{ userId: 'U0BOB', text: UNREADABLE_CALL_TEXT }]);
    expect(await unreadable.refusals()).toEqual([]);
  });
});
