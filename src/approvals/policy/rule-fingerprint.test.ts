import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { ruleFingerprint } from './rule-fingerprint.js';

const fingerprintOf = (rule: string, defaults = '') => {
  const [parsed] = parseConfigFile(`policy:\n${defaults}  rules:\n    - ${rule}\n`, 'countersign.yml').policy.rules;
  if (parsed === undefined) throw new Error('no rule parsed');
  return ruleFingerprint(parsed);
};

const RULE = '{ tools: [restart, scale], channels: [C0OPS, C0DEV], input: [{ field: a, equals: 1 }, { field: b, equals: 2 }], approvers: [UANN, UBOB] }';

describe('ruleFingerprint', () => {
  it('is the same for the same rule, with its unordered lists in any order', () => {
    expect(fingerprintOf(RULE)).toBe(fingerprintOf(RULE));
    expect(fingerprintOf(RULE)).toBe(
      fingerprintOf('{ tools: [scale, restart], channels: [C0DEV, C0OPS], input: [{ field: b, equals: 2 }, { field: a, equals: 1 }], approvers: [UBOB, UANN] }'),
    );
  });

  it.each([
    ['tools', RULE.replace('restart, scale', 'restart')],
    ['channels', RULE.replace('C0OPS, C0DEV', 'C0OPS')],
    ['an input condition', RULE.replace('equals: 1', 'equals: 3')],
    ['approvers', RULE.replace('UANN, UBOB', 'UANN')],
    ['quorum', `${RULE.slice(0, -2)}, required: 2 }`],
    ['grant limits', `${RULE.slice(0, -2)}, grants: identicalArguments }`],
    ['the approval condition', `${RULE.slice(0, -2)}, approval: { when: [{ field: a, equals: 1 }] } }`],
    ['the name', `{ name: restarts, ${RULE.slice(2)}`],
  ])('changes with a change to %s', (_what, changed) => {
    expect(fingerprintOf(changed)).not.toBe(fingerprintOf(RULE));
  });

  it('changes when a setting the rule inherits from defaults changes', () => {
    expect(fingerprintOf('{ tools: [restart] }', '  defaults: { approvers: [UANN] }\n')).not.toBe(fingerprintOf('{ tools: [restart] }', '  defaults: { approvers: [UBOB] }\n'));
  });
});
