import { describe, expect, it } from 'vitest';
import type { PolicyCondition } from '../../config/policy-config-schema.js';
import { compileCondition, compileConditionOutcome, type ConditionOutcome, readField } from './input-condition.js';

const met = (condition: PolicyCondition, input: unknown) => compileCondition(condition)(input);

describe('compileCondition', () => {
  const prod: PolicyCondition = { field: 'namespace', operator: 'equals', value: 'prod' };
  const port: PolicyCondition = { field: 'port', operator: 'equals', value: 8080 };
  const force: PolicyCondition = { field: 'force', operator: 'equals', value: true };
  const production: PolicyCondition = { field: 'namespace', operator: 'oneOf', values: ['prod', 'prod-eu'] };
  const internalImage: PolicyCondition = { field: 'image', operator: 'matches', pattern: '^registry\\.internal/' };
  const manyReplicas: PolicyCondition = { field: 'replicas', operator: 'greaterThan', value: 10 };

  it.each<[string, PolicyCondition, unknown, boolean]>([
    ['equals: the same text', prod, { namespace: 'prod' }, true],
    ['equals: other text', prod, { namespace: 'staging' }, false],
    ['equals: text differing in case (use an enum in the tool)', prod, { namespace: 'Prod' }, false],
    ['equals: a missing field', prod, { service: 'api' }, false],
    ['equals: a number written as text', port, { port: '8080' }, true],
    ['equals: a number in another notation', port, { port: '8080.0' }, true],
    ['equals: another number', port, { port: 8081 }, false],
    ['equals: true', force, { force: true }, true],
    ['equals: false', force, { force: false }, false],
    ['equals: "true" as text', force, { force: 'true' }, true],
    ['equals: any element of a list', prod, { namespace: ['staging', 'prod'] }, true],
    ['equals: no element of a list', prod, { namespace: ['staging'] }, false],
    ['equals: an empty list', prod, { namespace: [] }, false],
    ['equals: an object it cannot read', prod, { namespace: { name: 'prod' } }, true],
    ['equals: null', prod, { namespace: null }, true],
    ['oneOf: a listed value', production, { namespace: 'prod-eu' }, true],
    ['oneOf: an unlisted value', production, { namespace: 'dev' }, false],
    ['oneOf: a missing field', production, {}, false],
    ['matches: a matching image', internalImage, { image: 'registry.internal/api:1.2' }, true],
    ['matches: another registry', internalImage, { image: 'docker.io/api:1.2' }, false],
    ['matches: a number by its text', { field: 'tag', operator: 'matches', pattern: '^1\\.' }, { tag: 1.5 }, true],
    ['matches: a missing field', internalImage, {}, false],
    ['greaterThan: above', manyReplicas, { replicas: 11 }, true],
    ['greaterThan: equal', manyReplicas, { replicas: 10 }, false],
    ['greaterThan: numeric text', manyReplicas, { replicas: '25' }, true],
    ['greaterThan: non-numeric text needs a human', manyReplicas, { replicas: 'lots' }, true],
    ['greaterThan: empty text needs a human', manyReplicas, { replicas: '' }, true],
    ['greaterThan: a boolean needs a human', manyReplicas, { replicas: true }, true],
    ['greaterThan: a missing field', manyReplicas, { service: 'api' }, false],
    ['greaterThanOrEqual: equal', { field: 'replicas', operator: 'greaterThanOrEqual', value: 10 }, { replicas: 10 }, true],
    ['lessThan: below', { field: 'replicas', operator: 'lessThan', value: 1 }, { replicas: 0 }, true],
    ['lessThan: equal', { field: 'replicas', operator: 'lessThan', value: 1 }, { replicas: 1 }, false],
    ['lessThanOrEqual: equal', { field: 'replicas', operator: 'lessThanOrEqual', value: 0 }, { replicas: 0 }, true],
    ['lessThanOrEqual: above', { field: 'replicas', operator: 'lessThanOrEqual', value: 0 }, { replicas: 2 }, false],
    ['a nested path', { field: 'spec.namespace', operator: 'equals', value: 'prod' }, { spec: { namespace: 'prod' } }, true],
    ['a path through a list', { field: 'containers.image', operator: 'matches', pattern: ':latest$' }, { containers: [{ image: 'a:1' }, { image: 'b:latest' }] }, true],
    ['a list index', { field: 'hosts.1', operator: 'equals', value: 'db' }, { hosts: ['web', 'db'] }, true],
    ['a list index out of range', { field: 'hosts.5', operator: 'equals', value: 'db' }, { hosts: ['web', 'db'] }, false],
    ['an inherited property', { field: 'constructor', operator: 'matches', pattern: '.' }, {}, false],
    ['an input that is not an object', prod, 'prod', false],
  ])('%s', (_case, condition, input, expected) => {
    expect(met(condition, input)).toBe(expected);
  });
});

describe('compileConditionOutcome', () => {
  const devOrStaging: PolicyCondition = { field: 'namespaces', operator: 'oneOf', values: ['dev', 'staging'] };
  const fewReplicas: PolicyCondition = { field: 'replicas', operator: 'lessThanOrEqual', value: 3 };
  const internalImage: PolicyCondition = { field: 'containers.image', operator: 'matches', pattern: '^registry\\.internal/' };

  it.each<[string, PolicyCondition, unknown, ConditionOutcome]>([
    ['a clear value that meets it', fewReplicas, { replicas: 2 }, 'met'],
    ['a clear value that does not', fewReplicas, { replicas: 9 }, 'unmet'],
    ['numeric text', fewReplicas, { replicas: '2' }, 'met'],
    ['text that is not a number', fewReplicas, { replicas: '1e9x' }, 'unclear'],
    ['null', fewReplicas, { replicas: null }, 'unclear'],
    ['an object', fewReplicas, { replicas: { count: 2 } }, 'unclear'],
    ['an absent field', fewReplicas, {}, 'unmet'],
    ['a list whose every element meets it', devOrStaging, { namespaces: ['dev', 'staging'] }, 'met'],
    ['a list with one element that does not', devOrStaging, { namespaces: ['dev', 'prod'] }, 'unclear'],
    ['a list with no element that does', devOrStaging, { namespaces: ['prod'] }, 'unmet'],
    ['an empty list', devOrStaging, { namespaces: [] }, 'unmet'],
    ['a path through a list, every branch meeting it', internalImage, { containers: [{ image: 'registry.internal/a' }, { image: 'registry.internal/b' }] }, 'met'],
    ['a path through a list with a branch absent', internalImage, { containers: [{ image: 'registry.internal/a' }, { name: 'sidecar' }] }, 'unclear'],
  ])('%s', (_case, condition, input, expected) => {
    expect(compileConditionOutcome(condition)(input)).toBe(expected);
  });
});

describe('readField', () => {
  it('returns nothing for an absent field and every value for a list', () => {
    expect(readField({ a: { b: 1 } }, ['a', 'c'])).toEqual([]);
    expect(readField({ a: [{ b: 1 }, { c: 2 }, { b: 3 }] }, ['a', 'b'])).toEqual([1, 3]);
  });
});
