import type { JSONSchema7 } from 'ai';
import { describe, expect, it } from 'vitest';
import { fillBranchDefaults } from './branch-defaults.js';
import { createJsonSchemaValidator } from './json-schema-validator.js';

// As inputWithDefaults runs it: ajv fills the defaults it reaches, then the unions' branches.
const validator = createJsonSchemaValidator({ applyDefaults: true });
function policyView(schema: object, input: unknown): unknown {
  const checked = validator.validate(schema as JSONSchema7, input);
  if (!checked.success) throw new Error(`the input does not pass the schema: ${JSON.stringify(checked.issues)}`);
  return fillBranchDefaults({ schema: schema as JSONSchema7, value: checked.value, validator });
}

// pydantic v2's model: `kind: Literal[...]; name: str; namespace: str = <namespace>`.
const workload = (kind: string, namespace: string) => ({
  type: 'object',
  properties: { kind: { const: kind, type: 'string' }, name: { type: 'string' }, namespace: { type: 'string', default: namespace } },
  required: ['kind', 'name'],
});

describe('defaults inside anyOf and oneOf branches', () => {
  it('fills the defaults of the one branch of a union of models the input matches', () => {
    // `target: Deployment | StatefulSet`
    const schema = {
      type: 'object',
      properties: { target: { anyOf: [{ $ref: '#/$defs/Deployment' }, { $ref: '#/$defs/StatefulSet' }] } },
      required: ['target'],
      $defs: { Deployment: workload('deployment', 'prod'), StatefulSet: workload('statefulset', 'data') },
    };
    const input = { target: { kind: 'statefulset', name: 'db' } };
    expect(policyView(schema, input)).toEqual({ target: { kind: 'statefulset', name: 'db', namespace: 'data' } });
    expect(policyView(schema, { target: { kind: 'deployment', name: 'api' } })).toEqual({ target: { kind: 'deployment', name: 'api', namespace: 'prod' } });
    // A value written is kept; the input itself is never changed.
    expect(policyView(schema, { target: { kind: 'deployment', name: 'api', namespace: 'dev' } })).toEqual({ target: { kind: 'deployment', name: 'api', namespace: 'dev' } });
    expect(input).toEqual({ target: { kind: 'statefulset', name: 'db' } });
  });

  it('fills an optional model when it is given, and nothing for null (`Deployment | None = None`)', () => {
    const schema = {
      type: 'object',
      properties: { target: { anyOf: [{ $ref: '#/$defs/Deployment' }, { type: 'null' }], default: null } },
      $defs: { Deployment: workload('deployment', 'prod') },
    };
    expect(policyView(schema, { target: { kind: 'deployment', name: 'api' } })).toEqual({ target: { kind: 'deployment', name: 'api', namespace: 'prod' } });
    expect(policyView(schema, { target: null })).toEqual({ target: null });
    expect(policyView(schema, {})).toEqual({ target: null });
  });

  it('picks the branch of a discriminated union (`Field(discriminator="kind")`, a oneOf)', () => {
    const schema = {
      type: 'object',
      properties: {
        target: {
          oneOf: [{ $ref: '#/$defs/Deployment' }, { $ref: '#/$defs/StatefulSet' }],
          discriminator: { propertyName: 'kind', mapping: { deployment: '#/$defs/Deployment', statefulset: '#/$defs/StatefulSet' } },
        },
      },
      $defs: { Deployment: workload('deployment', 'prod'), StatefulSet: workload('statefulset', 'data') },
    };
    expect(policyView(schema, { target: { kind: 'statefulset', name: 'db' } })).toEqual({ target: { kind: 'statefulset', name: 'db', namespace: 'data' } });
  });

  it('gives a field the matching branches disagree on the list of their values, null for one that leaves it out', () => {
    // No discriminator: `{name: api}` passes both models.
    const loose = (namespace?: string) => ({
      type: 'object',
      properties: { name: { type: 'string' }, namespace: namespace === undefined ? { type: 'string' } : { type: 'string', default: namespace } },
      required: ['name'],
    });
    const union = (...branches: object[]) => ({ type: 'object', properties: { target: { anyOf: branches } } });
    expect(policyView(union(loose('prod'), loose('dev')), { target: { name: 'api' } })).toEqual({ target: { name: 'api', namespace: ['prod', 'dev'] } });
    expect(policyView(union(loose('prod'), loose()), { target: { name: 'api' } })).toEqual({ target: { name: 'api', namespace: ['prod', null] } });
    // They agree: the value itself.
    expect(policyView(union(loose('prod'), loose('prod')), { target: { name: 'api' } })).toEqual({ target: { name: 'api', namespace: 'prod' } });
    // Written, it is what both act on.
    expect(policyView(union(loose('prod'), loose('dev')), { target: { name: 'api', namespace: 'qa' } })).toEqual({ target: { name: 'api', namespace: 'qa' } });
  });

  it('reaches unions inside a branch, in lists, maps and allOf', () => {
    const schema = {
      type: 'object',
      properties: {
        // `targets: list[Deployment | StatefulSet]`
        targets: { type: 'array', items: { anyOf: [{ $ref: '#/$defs/Deployment' }, { $ref: '#/$defs/StatefulSet' }] } },
        // `by_team: dict[str, Deployment | None]`
        byTeam: { type: 'object', additionalProperties: { anyOf: [{ $ref: '#/$defs/Deployment' }, { type: 'null' }] } },
        // A union inside a union's branch, inside an allOf.
        plan: { allOf: [{ anyOf: [{ $ref: '#/$defs/Plan' }, { type: 'string' }] }] },
      },
      $defs: {
        Deployment: workload('deployment', 'prod'),
        StatefulSet: workload('statefulset', 'data'),
        Plan: { type: 'object', properties: { step: { anyOf: [{ $ref: '#/$defs/Deployment' }, { type: 'null' }] } }, required: ['step'] },
      },
    };
    const input = {
      targets: [{ kind: 'deployment', name: 'api' }, { kind: 'statefulset', name: 'db', namespace: 'qa' }],
      byTeam: { web: { kind: 'deployment', name: 'www' }, ops: null },
      plan: { step: { kind: 'deployment', name: 'api' } },
    };
    expect(policyView(schema, input)).toEqual({
      targets: [
        { kind: 'deployment', name: 'api', namespace: 'prod' },
        { kind: 'statefulset', name: 'db', namespace: 'qa' },
      ],
      byTeam: { web: { kind: 'deployment', name: 'www', namespace: 'prod' }, ops: null },
      plan: { step: { kind: 'deployment', name: 'api', namespace: 'prod' } },
    });
    expect(policyView(schema, { plan: 'later' })).toEqual({ plan: 'later' });
  });

  it('stops at a $ref cycle that reads no deeper into the input', () => {
    const schema = { $defs: { Loop: { anyOf: [workload('deployment', 'prod'), { $ref: '#/$defs/Loop' }] } }, $ref: '#/$defs/Loop' };
    // The branch that loops back is not filled again: it stands as one without the default (unclear, the strict side).
    expect(policyView(schema, { kind: 'deployment', name: 'api' })).toEqual({ kind: 'deployment', name: 'api', namespace: ['prod', null] });
  });

  it('counts a branch it cannot read alone as one the input may match, with no defaults of its own', () => {
    // `#/properties/...` does not reach the root from the branch on its own.
    const schema = {
      type: 'object',
      properties: {
        base: workload('deployment', 'dev'),
        target: { anyOf: [{ $ref: '#/properties/base' }, workload('deployment', 'prod')] },
      },
    };
    expect(policyView(schema, { target: { kind: 'deployment', name: 'api' } })).toEqual({ target: { kind: 'deployment', name: 'api', namespace: ['prod', null] } });
  });
});
