import { jsonSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import { createToolApproval, type GateBasis } from '../agent/tool-set.js';
import { parseConfigFile } from '../config/config-file.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { createJsonSchemaValidator } from '../tools/json-schema-validator.js';
import { evaluateCallPolicy } from './evaluate-call-policy.js';

/**
 * README (Approval policy): "Conditions read the input with the tool's schema defaults filled in: an
 * MCP tool whose schema says `namespace` defaults to `prod` … matches `namespace: prod` when the model
 * … leaves the field out, since the server will run it on prod."
 *
 * inputWithDefaults fills defaults with ajv's `useDefaults`, which ignores every `default` inside
 * `anyOf` / `oneOf`. pydantic (FastMCP) writes exactly that for a union or an optional model:
 *
 *   class Deployment(BaseModel): kind: Literal["deployment"]; name: str; namespace: str = "prod"
 *   class StatefulSet(BaseModel): kind: Literal["statefulset"]; name: str; namespace: str = "prod"
 *   @mcp.tool()
 *   def restart(target: Deployment | StatefulSet): ...
 *
 * -> "target": {"anyOf": [{"$ref": "#/$defs/Deployment"}, {"$ref": "#/$defs/StatefulSet"}]}
 *
 * The model sends `{target: {kind: deployment, name: api}}`; pydantic builds Deployment(namespace="prod")
 * and the server restarts prod. The policy sees no `target.namespace`, so the prod rule is unmet and the
 * laxer rule decides: the call runs without a card.
 */
const { policy } = parseConfigFile(
  `
policy:
  rules:
    - name: prod restarts
      tools: ["k8s.restart"]
      input: [{ field: target.namespace, equals: prod }]
      approvers: [U0LEAD1, U0LEAD2]
      required: 2
    - name: other restarts
      tools: ["k8s.restart"]
      approval: never
`,
  'schema-default-union.yml',
);

const target = (kind: string) => ({
  type: 'object',
  properties: { kind: { const: kind, type: 'string' }, name: { type: 'string' }, namespace: { type: 'string', default: 'prod' } },
  required: ['kind', 'name'],
});

// As pydantic v2 writes `target: Deployment | StatefulSet` (and mcp-tool-definition.ts's toDefinition adds additionalProperties: false).
const unionSchema = {
  type: 'object',
  properties: { target: { anyOf: [{ $ref: '#/$defs/Deployment' }, { $ref: '#/$defs/StatefulSet' }] } },
  required: ['target'],
  $defs: { Deployment: target('deployment'), StatefulSet: target('statefulset') },
  additionalProperties: false,
} as const;

// As pydantic v2 writes `target: Deployment | None = None`.
const optionalSchema = {
  type: 'object',
  properties: { target: { anyOf: [{ $ref: '#/$defs/Deployment' }, { type: 'null' }], default: null } },
  $defs: { Deployment: target('deployment') },
  additionalProperties: false,
} as const;

const define = (schema: object): ToolDefinition => ({
  name: 'k8s.restart',
  description: 'Restart a workload',
  inputSchema: jsonSchema<Record<string, unknown>>(schema as never),
  execute: async () => ({ ok: true }),
});

const context = { requesterId: 'U0REQUESTER', teamId: 'T0TEAM', channel: 'C0OPS', threadTs: '1700000000.000100' };

describe('schema defaults inside anyOf (pydantic unions and optional models)', () => {
  const input = { target: { kind: 'deployment', name: 'api' } };

  it.each([
    ['a union of models', unionSchema],
    ['an optional model', optionalSchema],
  ])('%s: a call that leaves the defaulted namespace out is judged under the prod rule', async (_case, schema) => {
    const definition = define(schema);
    // The model's input passes the schema (ajv, as the MCP tool checks it before sending it).
    expect(createJsonSchemaValidator().validate(schema as never, input).success).toBe(true);
    const evaluation = await evaluateCallPolicy({ policy, definition, toolName: 'k8s.restart', input, context });
    expect(evaluation.rule?.name, 'the server restarts prod (namespace defaults to prod), but the policy chose the laxer rule').toBe('prod restarts');
  });

  it('the gate asks for it rather than letting it run without a card', async () => {
    const definition = define(unionSchema);
    const gate = createToolApproval({ definitions: [definition], context, policy, bases: new Map<string, GateBasis>() }) as (call: {
      toolCall: { toolCallId: string; toolName: string; input: unknown };
    }) => Promise<unknown>;
    // Control: the prod call with the namespace written out asks.
    expect(await gate({ toolCall: { toolCallId: 'c0', toolName: 'k8s.restart', input: { target: { kind: 'deployment', name: 'api', namespace: 'prod' } } } })).toBe('user-approval');
    expect(await gate({ toolCall: { toolCallId: 'c1', toolName: 'k8s.restart', input } }), 'a prod restart ran without a card').toBe('user-approval');
  });
});

describe('schema defaults inside unions: which rule judges the call', () => {
  const evaluate = (schema: object, input: unknown, onPolicy = policy) =>
    evaluateCallPolicy({ policy: onPolicy, definition: define(schema), toolName: 'k8s.restart', input, context });

  it('a discriminated union (pydantic `Field(discriminator="kind")`, a oneOf) is judged by its branch default', async () => {
    const schema = {
      type: 'object',
      properties: {
        target: {
          oneOf: [{ $ref: '#/$defs/Deployment' }, { $ref: '#/$defs/StatefulSet' }],
          discriminator: { propertyName: 'kind', mapping: { deployment: '#/$defs/Deployment', statefulset: '#/$defs/StatefulSet' } },
        },
      },
      required: ['target'],
      $defs: { Deployment: target('deployment'), StatefulSet: { ...target('statefulset'), properties: { ...target('statefulset').properties, namespace: { type: 'string', default: 'data' } } } },
      additionalProperties: false,
    };
    expect((await evaluate(schema, { target: { kind: 'deployment', name: 'api' } })).rule?.name).toBe('prod restarts');
    expect((await evaluate(schema, { target: { kind: 'statefulset', name: 'db' } })).rule?.name).toBe('other restarts');
  });

  it('`Deployment | None = None` given null has no defaults: the call is judged without a namespace', async () => {
    expect(await evaluate(optionalSchema, { target: null })).toMatchObject({ rule: { name: 'other restarts' }, needsApproval: false });
    expect(await evaluate(optionalSchema, {})).toMatchObject({ rule: { name: 'other restarts' }, needsApproval: false });
  });

  it('branches that all match but default differently leave the namespace unclear: the stricter rule decides', async () => {
    // No discriminator: `{name: api}` passes both models, and they disagree on the namespace.
    const loose = (namespace: string) => ({ type: 'object', properties: { name: { type: 'string' }, namespace: { type: 'string', default: namespace } }, required: ['name'] });
    const schema = { type: 'object', properties: { target: { anyOf: [loose('prod'), loose('dev')] } }, required: ['target'] };
    const input = { target: { name: 'api' } };
    // A stricter rule it may fall under takes it.
    expect(await evaluate(schema, input)).toMatchObject({ rule: { name: 'prod restarts' }, needsApproval: true });
    // A laxer rule it may fall under does not let it run.
    const devIsFree = parseConfigFile(
      `
policy:
  rules:
    - name: restarts need SRE
      tools: ["k8s.restart"]
      approvers: [U0SRE]
    - name: dev restarts are free
      tools: ["k8s.restart"]
      input: [{ field: target.namespace, equals: dev }]
      approval: never
`,
      'schema-default-union-dev.yml',
    ).policy;
    expect(await evaluate(schema, input, devIsFree)).toMatchObject({ rule: { name: 'restarts need SRE' }, needsApproval: true });
    // Control: written out, dev is dev.
    expect(await evaluate(schema, { target: { name: 'api', namespace: 'dev' } }, devIsFree)).toMatchObject({ rule: { name: 'dev restarts are free' }, needsApproval: false });
  });
});
