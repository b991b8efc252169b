import { describe, expect, it } from 'vitest';
import { problemsOf } from './config-problems.test-support.js';
import { parseConfigFile } from './config-file.js';
import { evaluatePolicy } from '../approvals/policy/evaluate-policy.js';

const policyOf = (yamlText: string) => parseConfigFile(yamlText, 'countersign.yml').policy;


const fields = (yamlText: string) => problemsOf(yamlText).map((problem) => problem.field);

/** One rule under `policy.rules`, written as YAML flow-mapping entries. */
const rule = (entries: string) => `policy:\n  rules:\n    - { ${entries} }\n`;

describe('policy config', () => {
  it('resolves the documented example, keeping what each rule inherits', () => {
    const policy = policyOf(`
policy:
  autoApprove:
    channels: [C0AUTOMATION]
  defaults:
    expiry: 24h
    reminder: 1h
  rules:
    - name: prod restarts
      tools: ["restart_*", "k8s.*"]
      channels: [C0OPS]
      approval:
        when:
          - { field: namespace, equals: prod }
          - { field: replicas, greaterThan: 10 }
        match: any
      approvers: [U0ALICE, "group:S0ONCALL", requester]
      required: 2
      expiry: 4h
      reminder: 30m
      autoApprove: forbidden
      grants: identicalArguments
    - tools: [list_pods]
      approval: never
`);
    expect(policy).toEqual({
      autoApprove: { global: false, channels: ['C0AUTOMATION'] },
      defaults: {
        approvers: [{ kind: 'channel' }],
        required: 1,
        allowSelfApproval: true,
        expiryMs: 86_400_000,
        reminderMs: 3_600_000,
        onExpiry: 'stop',
        autoApprove: 'allowed',
        grants: 'allowed',
      },
      rules: [
        {
          name: 'prod restarts',
          tools: ['restart_*', 'k8s.*'],
          channels: ['C0OPS'],
          approval: {
            when: [
              { field: 'namespace', operator: 'equals', value: 'prod' },
              { field: 'replicas', operator: 'greaterThan', value: 10 },
            ],
            match: 'any',
          },
          approvers: [{ kind: 'user', userId: 'U0ALICE' }, { kind: 'group', groupId: 'S0ONCALL' }, { kind: 'requester' }],
          required: 2,
          allowSelfApproval: true,
          expiryMs: 14_400_000,
          reminderMs: 1_800_000,
          onExpiry: 'stop',
          autoApprove: 'forbidden',
          grants: 'identicalArguments',
        },
        {
          tools: ['list_pods'],
          approval: 'never',
          approvers: [{ kind: 'channel' }],
          required: 1,
          allowSelfApproval: true,
          expiryMs: 86_400_000,
          reminderMs: 3_600_000,
          onExpiry: 'stop',
          autoApprove: 'allowed',
          grants: 'allowed',
        },
      ],
    });
  });

  it('defaults a rule without approval to always: a forgotten line asks rather than allows', () => {
    expect(policyOf(rule('tools: [deploy]')).rules[0]?.approval).toBe('always');
  });

  it('treats an empty policy section as absent', () => {
    expect(policyOf('policy:\n')).toEqual(policyOf(''));
  });

  it.each([
    ['the built-in channel approvers', 'rules: [{ tools: [a] }]', { approvers: [{ kind: 'channel' }], allowSelfApproval: true }],
    ['named users', 'rules: [{ tools: [a], approvers: [U0ALICE] }]', { allowSelfApproval: false }],
    ['a group', 'rules: [{ tools: [a], approvers: ["group:S0ONCALL"] }]', { allowSelfApproval: false }],
    ['a list with requester', 'rules: [{ tools: [a], approvers: [requester, "group:S0ONCALL"] }]', { allowSelfApproval: true }],
    ['the channel, with self-approval switched off', 'rules: [{ tools: [a], allowSelfApproval: false }]', { allowSelfApproval: false }],
    [
      'approvers inherited from defaults',
      'defaults: { approvers: ["group:S0ONCALL"] }\n  rules: [{ tools: [a] }]',
      { approvers: [{ kind: 'group', groupId: 'S0ONCALL' }], allowSelfApproval: false },
    ],
    [
      'an explicit default that named approvers in the rule do not inherit',
      'defaults: { allowSelfApproval: true, approvers: ["group:S0ONCALL"] }\n  rules: [{ tools: [a], approvers: [U0ALICE] }]',
      { allowSelfApproval: false },
    ],
    [
      'a default kept when the rule names no approvers',
      'defaults: { allowSelfApproval: true, approvers: ["group:S0ONCALL"] }\n  rules: [{ tools: [a], required: 2 }]',
      { allowSelfApproval: true, required: 2 },
    ],
  ])('decides self-approval for %s', (_case, policyBody, expected) => {
    expect(policyOf(`policy:\n  ${policyBody}\n`).rules[0]).toMatchObject(expected);
  });

  it('lets a rule switch off a reminder it would inherit', () => {
    const policy = policyOf('policy:\n  defaults: { reminder: 1h }\n  rules: [{ tools: [a], reminder: none }, { tools: [b] }]\n');
    expect(policy.rules.map((each) => each.reminderMs)).toEqual([undefined, 3_600_000]);
  });

  it.each([
    ['equals', '{ field: spec.namespace, equals: prod }', { field: 'spec.namespace', operator: 'equals', value: 'prod' }],
    ['oneOf', '{ field: env, oneOf: [prod, 1, true] }', { field: 'env', operator: 'oneOf', values: ['prod', 1, true] }],
    ['matches', '{ field: image, matches: "^registry\\\\.internal/" }', { field: 'image', operator: 'matches', pattern: '^registry\\.internal/' }],
    ['greaterThanOrEqual', '{ field: replicas, greaterThanOrEqual: 5 }', { field: 'replicas', operator: 'greaterThanOrEqual', value: 5 }],
    ['lessThan', '{ field: replicas, lessThan: 1 }', { field: 'replicas', operator: 'lessThan', value: 1 }],
    ['lessThanOrEqual', '{ field: replicas, lessThanOrEqual: 0 }', { field: 'replicas', operator: 'lessThanOrEqual', value: 0 }],
  ])('reads a %s condition', (_case, condition, expected) => {
    const policy = policyOf(rule(`tools: [a], approval: { when: [${condition}] }`));
    expect(policy.rules[0]?.approval).toEqual({ when: [expected], match: 'all' });
  });

  const at = (path: string) => `countersign.yml policy.${path}`;

  it('routes a card as its rule says, inheriting notify from defaults', () => {
    const policy = policyOf(`
policy:
  defaults:
    notify: { channels: [C0APPROVALS] }
  rules:
    - { tools: [a], approvers: [U0ALICE], notify: { thread: false, channels: [C0APPROVALS], dmApprovers: true } }
    - { tools: [b] }
`);
    expect(policy.rules[0]?.notify).toEqual({ thread: false, channels: ['C0APPROVALS'], dmApprovers: true });
    expect(policy.rules[1]?.notify).toEqual({ thread: true, channels: ['C0APPROVALS'], dmApprovers: false });
  });

  it('reads an escalation ladder', () => {
    const policy = policyOf(rule('tools: [a], approvers: [U0ALICE], expiry: 1h, escalation: [{ after: 15m, remind: true }, { after: 30m, addApprovers: ["group:S0LEADS", U0BOSS] }]'));
    expect(policy.rules[0]?.escalation).toEqual([
      { afterMs: 15 * 60_000, remind: true, addApprovers: [] },
      { afterMs: 30 * 60_000, remind: false, addApprovers: [{ kind: 'group', groupId: 'S0LEADS' }, { kind: 'user', userId: 'U0BOSS' }] },
    ]);
  });

  it('names the notify field and says why in the message', () => {
    const [problem] = problemsOf(rule('tools: [a], notify: { channels: ["#approvals"] }'));
    expect(problem?.message).toContain('not a #name');
  });

  it.each([
    ['a policy that is not a mapping', 'policy: []', ['countersign.yml policy']],
    ['an unknown policy key', 'policy: { rule: [] }', [at('rule')]],
    ['a rule without tools', rule('approval: always'), [at('rules[0].tools')]],
    ['an empty tools list', rule('tools: []'), [at('rules[0].tools')]],
    ['a tool pattern with a space', rule('tools: ["restart service"]'), [at('rules[0].tools[0]')]],
    ['a tool pattern with ***', rule('tools: ["k8s.***"]'), [at('rules[0].tools[0]')]],
    ['a repeated tool pattern', rule('tools: [a, b, a]'), [at('rules[0].tools[2]')]],
    ['a channel given by name', rule('tools: [a], channels: ["#ops"]'), [at('rules[0].channels[0]')]],
    ['an empty channel list', rule('tools: [a], channels: []'), [at('rules[0].channels')]],
    ['an unknown rule key', rule('tools: [a], aprovers: [U0ALICE]'), [at('rules[0].aprovers')]],
    ['an empty approver list', rule('tools: [a], approvers: []'), [at('rules[0].approvers')]],
    ['an approver by name', rule('tools: [a], approvers: [U0ALICE, alice]'), [at('rules[0].approvers[1]')]],
    ['a lowercase user id', rule('tools: [a], approvers: [u0alice]'), [at('rules[0].approvers[0]')]],
    ['a bare usergroup id', rule('tools: [a], approvers: [S0ONCALL]'), [at('rules[0].approvers[0]')]],
    ['a malformed group', rule('tools: [a], approvers: ["group:oncall"]'), [at('rules[0].approvers[0]')]],
    ['a number as approver', rule('tools: [a], approvers: [42]'), [at('rules[0].approvers[0]')]],
    ['a repeated approver', rule('tools: [a], approvers: [U0ALICE, U0ALICE]'), [at('rules[0].approvers[1]')]],
    ['channel mixed with named approvers', rule('tools: [a], approvers: [channel, U0ALICE]'), [at('rules[0].approvers[0]')]],
    ['a quorum of zero', rule('tools: [a], required: 0'), [at('rules[0].required')]],
    ['a quorum above ten', rule('tools: [a], required: 11'), [at('rules[0].required')]],
    ['a fractional quorum', rule('tools: [a], required: 1.5'), [at('rules[0].required')]],
    ['a quorum larger than the named users', rule('tools: [a], approvers: [U0ALICE, U0BOB], required: 3'), [at('rules[0].required')]],
    ['named users fewer than the inherited quorum', 'policy:\n  defaults: { required: 2 }\n  rules: [{ tools: [a], approvers: [U0ALICE] }]', [at('rules[0].approvers')]],
    ['self-approval refused while requester is listed', rule('tools: [a], approvers: [requester], allowSelfApproval: false'), [at('rules[0].allowSelfApproval')]],
    ['a non-boolean self-approval', rule('tools: [a], allowSelfApproval: sometimes'), [at('rules[0].allowSelfApproval')]],
    ['an expiry without a unit', rule('tools: [a], expiry: 30'), [at('rules[0].expiry')]],
    ['an expiry in words', rule('tools: [a], expiry: 4 hours'), [at('rules[0].expiry')]],
    ['an expiry under a minute', rule('tools: [a], expiry: 30s'), [at('rules[0].expiry')]],
    ['an expiry over thirty days', rule('tools: [a], expiry: 31d'), [at('rules[0].expiry')]],
    ['a reminder in words', rule('tools: [a], reminder: soon'), [at('rules[0].reminder')]],
    ['a reminder as long as the expiry', rule('tools: [a], expiry: 1h, reminder: 1h'), [at('rules[0].reminder')]],
    ['a short expiry under an inherited reminder', 'policy:\n  defaults: { reminder: 1h }\n  rules: [{ tools: [a], expiry: 30m }]', [at('rules[0].expiry')]],
    ['a default reminder beyond the default expiry', 'policy:\n  defaults: { expiry: 1h, reminder: 2h }\n  rules: [{ tools: [a] }]', [at('defaults.reminder')]],
    ['an unknown expiry outcome', rule('tools: [a], onExpiry: deny'), [at('rules[0].onExpiry')]],
    ['an unknown autoApprove value', rule('tools: [a], autoApprove: never'), [at('rules[0].autoApprove')]],
    ['an unknown grants value', rule('tools: [a], grants: thread'), [at('rules[0].grants')]],
    ['an unknown approval word', rule('tools: [a], approval: sometimes'), [at('rules[0].approval')]],
    ['an escalation stage that does nothing', rule('tools: [a], escalation: [{ after: 10m }]'), [at('rules[0].escalation[0]')]],
    ['an escalation to the whole channel', rule('tools: [a], escalation: [{ after: 10m, addApprovers: [channel] }]'), [at('rules[0].escalation[0].addApprovers[0]')]],
    ['escalation stages out of order', rule('tools: [a], escalation: [{ after: 30m, remind: true }, { after: 10m, remind: true }]'), [at('rules[0].escalation[1].after')]],
    ['an escalation after the expiry', rule('tools: [a], expiry: 1h, escalation: [{ after: 2h, remind: true }]'), [at('rules[0].escalation[0].after')]],
    ['an escalation without after', rule('tools: [a], escalation: [{ remind: true }]'), [at('rules[0].escalation[0].after')]],
    ['a notify channel given by name', rule('tools: [a], notify: { channels: ["#approvals"] }'), [at('rules[0].notify.channels[0]')]],
    ['an unknown notify key', rule('tools: [a], notify: { dm: true }'), [at('rules[0].notify.dm')]],
    ['a notify that reaches nobody', rule('tools: [a], notify: { thread: false }'), [at('rules[0].notify.thread')]],
    ['DMs without named approvers', rule('tools: [a], notify: { dmApprovers: true }'), [at('rules[0].notify.dmApprovers')]],
    ['channel approvers with the thread card stripped of its buttons', rule('tools: [a], notify: { thread: false, channels: [C0APPROVALS] }'), [at('rules[0].notify.thread')]],
    [
      'channel approvers under an inherited thread: false',
      'policy:\n  defaults: { approvers: [U0ALICE], notify: { thread: false, channels: [C0APPROVALS] } }\n  rules: [{ tools: [a], approvers: [channel] }]',
      [at('rules[0].approvers')],
    ],
    // DMs go only to users named by id: a group's members would have no card with buttons.
    ['a group approver decided only in DMs', rule('tools: [a], approvers: [U0OPS1, "group:S0LEADS"], notify: { thread: false, dmApprovers: true }'), [at('rules[0].approvers')]],
    [
      'an escalation that adds a group to a rule decided only in DMs',
      rule('tools: [a], approvers: [U0OPS1], notify: { thread: false, dmApprovers: true }, escalation: [{ after: 10m, addApprovers: [U0LEAD, "group:S0LEADS"] }]'),
      [at('rules[0].escalation[0].addApprovers[1]')],
    ],
    [
      'a group approver under an inherited DM-only notify',
      'policy:\n  defaults: { approvers: [U0ALICE], notify: { thread: false, dmApprovers: true } }\n  rules: [{ tools: [a], approvers: [U0OPS1, "group:S0LEADS"] }]',
      [at('rules[0].approvers')],
    ],
    ['a non-boolean notify thread', rule('tools: [a], notify: { thread: maybe, channels: [C0APPROVALS] }'), [at('rules[0].notify.thread')]],
    ['an approval with no conditions', rule('tools: [a], approval: { when: [] }'), [at('rules[0].approval.when')]],
    ['an approval without when', rule('tools: [a], approval: { match: any }'), [at('rules[0].approval.when')]],
    ['an unknown approval key', rule('tools: [a], approval: { when: [{ field: a, equals: b }], mode: any }'), [at('rules[0].approval.mode')]],
    ['an unknown match mode', rule('tools: [a], approval: { when: [{ field: a, equals: b }], match: most }'), [at('rules[0].approval.match')]],
    ['a condition without comparison', rule('tools: [a], approval: { when: [{ field: namespace }] }'), [at('rules[0].approval.when[0]')]],
    ['a condition with two comparisons', rule('tools: [a], approval: { when: [{ field: n, greaterThan: 1, lessThan: 5 }] }'), [at('rules[0].approval.when[0].lessThan')]],
    ['a condition without field', rule('tools: [a], approval: { when: [{ equals: prod }] }'), [at('rules[0].approval.when[0].field')]],
    ['a malformed field path', rule('tools: [a], approval: { when: [{ field: "spec..ns", equals: prod }] }'), [at('rules[0].approval.when[0].field')]],
    ['an unknown comparison', rule('tools: [a], approval: { when: [{ field: a, contains: b }] }'), [at('rules[0].approval.when[0].contains'), at('rules[0].approval.when[0]')]],
    ['an invalid regular expression', rule('tools: [a], approval: { when: [{ field: image, matches: "([" }] }'), [at('rules[0].approval.when[0].matches')]],
    ['a lookahead in an input condition', rule('tools: [a], input: [{ field: service, matches: "^(?!canary-)" }]'), [at('rules[0].input[0].matches')]],
    ['a backreference in an approval condition', rule('tools: [a], approval: { when: [{ field: tag, matches: "^(\\\\d)\\\\1" }] }'), [at('rules[0].approval.when[0].matches')]],
    ['a numeric comparison with text', rule('tools: [a], approval: { when: [{ field: replicas, greaterThan: ten }] }'), [at('rules[0].approval.when[0].greaterThan')]],
    ['an equals without a value', rule('tools: [a], approval: { when: [{ field: a, equals: null }] }'), [at('rules[0].approval.when[0].equals')]],
    ['an empty oneOf', rule('tools: [a], approval: { when: [{ field: a, oneOf: [] }] }'), [at('rules[0].approval.when[0].oneOf')]],
    ['settings on an approval: never rule', rule('tools: [a], approval: never, approvers: [U0ALICE], expiry: 1h'), [at('rules[0].approvers'), at('rules[0].expiry')]],
    ['an empty rule name', rule('name: "", tools: [a]'), [at('rules[0].name')]],
    ['a duplicate rule name', 'policy:\n  rules: [{ name: x, tools: [a] }, { name: x, tools: [b] }]', [at('rules[1].name')]],
    ['a rule hidden by an earlier one', 'policy:\n  rules: [{ tools: ["restart_*", b] }, { tools: ["restart_*"], approval: never }]', [at('rules[1].tools')]],
    [
      'a channel rule hidden by an earlier wider one',
      'policy:\n  rules: [{ tools: [a], channels: [C0OPS, C0DEV] }, { tools: [a], channels: [C0OPS] }]',
      [at('rules[1].tools')],
    ],
    ['an unknown defaults key', 'policy: { defaults: { tools: [a] } }', [at('defaults.tools')]],
    ['a defaults value of the wrong kind', 'policy: { defaults: { required: many } }', [at('defaults.required')]],
    ['auto-approve channels by name', 'policy: { autoApprove: { channels: ["#automation"] } }', [at('autoApprove.channels[0]')]],
    ['auto-approve channels beside global', 'policy: { autoApprove: { global: true, channels: [C0AUTOMATION] } }', [at('autoApprove.channels')]],
    ['a non-boolean global', 'policy: { autoApprove: { global: yes } }', [at('autoApprove.global')]],
  ])('names the field for %s', (_case, yamlText, expected) => {
    expect(fields(yamlText)).toEqual(expected);
  });

  it('reports every broken rule in one run', () => {
    const yamlText = 'policy:\n  rules:\n    - { tools: [a], required: 0 }\n    - { tools: [b], approvers: [alice] }\n    - { tools: [c], expiry: 5 }\n';
    expect(fields(yamlText)).toEqual([at('rules[0].required'), at('rules[1].approvers[0]'), at('rules[2].expiry')]);
  });

  it.each([
    [rule('tools: [a], aprovers: [U0ALICE]'), 'is not a known setting (did you mean approvers?)'],
    [rule('tools: [a], approvers: [S0ONCALL]'), 'must be a Slack user id (U… or W…), group:<usergroup id> (S…), requester or channel (write group:S0ONCALL for a user group)'],
    [rule('tools: [a], expiry: 30'), 'must be a duration like 30s, 15m, 4h, 2d or 1h30m'],
    [rule('tools: [a], approval: sometimes'), 'must be always, never, or { when: [conditions], match: all | any }'],
    [rule('tools: [a], approval: { when: [{ field: image, matches: "([" }] }'), 'is not a valid regular expression'],
    [
      rule('tools: [a], input: [{ field: service, matches: "^(?!canary-)" }]'),
      'cannot run on the linear-time engine (error parsing regexp: invalid or unsupported Perl syntax: `(?!`); lookahead, lookbehind, backreferences and repeats over 1000 are not supported',
    ],
    [
      rule('tools: [a], input: [{ field: host, matches: "[\\\\S.]+" }]'),
      'uses \\S inside a character class, which the linear-time engine cannot express; write (?:\\S|[…]) instead',
    ],
    [
      'policy:\n  defaults: { reminder: 1h }\n  rules: [{ tools: [a], expiry: 30m }]',
      'the reminder, 1h (inherited from defaults) before expiry, must be shorter than the expiry of 30m; shorten it or write reminder: none',
    ],
    [
      'policy:\n  defaults: { required: 2 }\n  rules: [{ tools: [a], approvers: [U0ALICE] }]',
      'asks for 2 distinct approvers (inherited from defaults) but approvers names only 1',
    ],
    [
      'policy:\n  rules: [{ tools: ["restart_*", b] }, { tools: ["restart_*"], approval: never }]',
      'is never used: rules[0] already covers the same tools and comes first',
    ],
    [
      rule('tools: [a], notify: { thread: false, channels: [C0APPROVALS] }'),
      "is false but approvers (inherited from defaults) includes channel: channel (anyone in the thread's channel) can approve only on the thread's card, which has no buttons with thread: false; keep the thread's card or name users or groups as approvers",
    ],
    [
      rule('tools: [a], approvers: [U0OPS1, "group:S0LEADS"], notify: { thread: false, dmApprovers: true }'),
      "includes a group but notify has thread: false and no channels: a group gets no DM (DMs go only to users named by id), so with thread: false and no notify.channels its members would have no card with buttons; name an approval channel in notify.channels, keep the thread's card, or name the users",
    ],
  ])('explains the problem in %j', (yamlText, message) => {
    expect(problemsOf(yamlText).map((problem) => problem.message)).toEqual([message]);
  });

  it('keeps a later rule that is more specific somewhere', () => {
    expect(() => policyOf('policy:\n  rules: [{ tools: [a] }, { tools: [a], channels: [C0OPS] }, { tools: [a, b] }]\n')).not.toThrow();
  });

  it('keeps a later rule with input conditions, which governs the inputs it covers', () => {
    const policy = policyOf(`
policy:
  rules:
    - { name: restarts, tools: [restart_service], approvers: [U0ALICE] }
    - name: prod restarts need SRE leads
      tools: [restart_service]
      input: [{ field: namespace, equals: prod }]
      approvers: ["group:S0SRELEADS"]
`);
    const ruleFor = (namespace: string) => evaluatePolicy({ policy, toolName: 'restart_service', channel: 'C1', input: { namespace } }).rule?.name;
    expect(ruleFor('prod')).toBe('prod restarts need SRE leads');
    expect(ruleFor('staging')).toBe('restarts');
  });
});

describe('policy config: a rule an earlier, as specific glob already covers', () => {
  const rules = (...lines: string[]) => `policy:\n  rules:\n${lines.map((line) => `    - ${line}`).join('\n')}\n`;
  const problemsAt = (yamlText: string) => problemsOf(yamlText).map(({ field, message }) => ({ field, message }));

  it.each([
    [['{ tools: ["ops.**"] }', '{ tools: ["ops.*"], approvers: [U0ALICE] }'], 'rules[0] already covers every tool it names (ops.* by ops.**) and comes first'],
    [['{ tools: ["**"] }', '{ tools: ["*"] }'], 'rules[0] already covers every tool it names (* by **) and comes first'],
    [['{ tools: ["restart_*"] }', '{ tools: ["restart_?*"] }'], 'rules[0] already covers every tool it names (restart_?* by restart_*) and comes first'],
    [
      ['{ name: ops, tools: ["ops.**"] }', '{ tools: ["db.*"] }', '{ name: late, tools: ["ops.?", "db.?"] }'],
      'rules[0] ("ops"), rules[1] already cover every tool it names (ops.? by ops.**, db.? by db.*) and come first',
    ],
    [['{ tools: ["ops.**"], channels: [C0OPS, C0DEV] }', '{ tools: ["ops.*"], channels: [C0OPS] }'], 'rules[0] already covers every tool it names (ops.* by ops.**) in these channels and comes first'],
  ])('refuses the later of %j', (lines, message) => {
    const yamlText = rules(...lines);
    expect(problemsAt(yamlText)).toEqual([{ field: `countersign.yml policy.rules[${lines.length - 1}].tools`, message: `is never used: ${message}` }]);
  });

  it.each([
    // ops.** also matches ops.apps.delete, which ops.* does not.
    ['{ tools: ["ops.*"] }', '{ tools: ["ops.**"] }'],
    ['{ tools: ["*"] }', '{ tools: ["**"] }'],
    // More literal characters, or an exact name, win over an earlier glob (select-rule.ts).
    ['{ tools: ["**"] }', '{ tools: ["ops.*"] }'],
    ['{ tools: ["ops.**"] }', '{ tools: ["ops.get_*"] }'],
    ['{ tools: ["restart_*"] }', '{ tools: [restart_api] }'],
    ['{ tools: ["restart_**"] }', '{ tools: ["restart_api*"] }'],
    // Only part of the later rule is covered.
    ['{ tools: ["ops.**"] }', '{ tools: ["ops.*", deploy] }'],
    // A rule with input conditions covers only some inputs; a rule limited to channels, only those.
    ['{ tools: ["ops.**"], input: [{ field: namespace, equals: prod }] }', '{ tools: ["ops.*"] }'],
    ['{ tools: ["ops.**"], channels: [C0OPS] }', '{ tools: ["ops.*"] }'],
    ['{ tools: ["ops.**"] }', '{ tools: ["ops.*"], channels: [C0OPS] }'],
  ])('keeps %s then %s', (first, second) => {
    expect(() => policyOf(rules(first, second))).not.toThrow();
  });

  it('keeps a later glob the earlier one does not cover, and it applies where only it matches', () => {
    const policy = policyOf(rules('{ name: one part, tools: ["ops.*"] }', '{ name: any depth, tools: ["ops.**"] }'));
    const ruleFor = (toolName: string) => evaluatePolicy({ policy, toolName, channel: 'C1', input: {} }).rule?.name;
    expect([ruleFor('ops.restart'), ruleFor('ops.apps.restart')]).toEqual(['one part', 'any depth']);
  });
});

describe('policy config: checks across rules beside a rule with its own problem', () => {
  it('reports the duplicate name and the shadowed rule in the same run as a bad approver', () => {
    const problems = problemsOf(`policy:
  rules:
    - name: prod
      tools: [deploy]
      approvers: [U0LEAD1]
    - name: prod
      tools: [deploy]
      approvers: ["@alice"]
`);
    expect(problems.map((problem) => problem.field)).toEqual([
      'countersign.yml policy.rules[1].approvers[0]',
      'countersign.yml policy.rules[1].name',
      'countersign.yml policy.rules[1].tools',
    ]);
  });

  it('compares only well-formed fields: a malformed rule neither shadows nor is shadowed', () => {
    const problems = problemsOf(`policy:
  rules:
    - { name: a, tools: 5 }
    - { name: b, tools: [deploy], channels: [nope] }
    - { name: c, tools: [deploy] }
    - { name: c, tools: [deploy], approvers: ["@alice"] }
    - "not a rule"
`);
    expect(problems.map((problem) => problem.field)).toEqual([
      'countersign.yml policy.rules[0].tools',
      'countersign.yml policy.rules[1].channels[0]',
      'countersign.yml policy.rules[3].approvers[0]',
      'countersign.yml policy.rules[4]',
      'countersign.yml policy.rules[3].name',
      'countersign.yml policy.rules[3].tools',
    ]);
  });
});
