import { describe, expect, it } from 'vitest';
import type { JsonSchema } from './json-schema.js';
import { buildSchemaForm, parseSchemaForm } from './schema-form.js';
import { stateFromBlocks } from './view-state.test-support.js';

// Review T-1 (5fed609): a group that collapses to `null` because the model sent it `null` (untouched) carries
// `cleared: true` up from its empty child inputs, so the object around it reads as "cleared on screen by the
// approver" and is itself collapsed (to null, or left out). An untouched submit no longer returns the model input.
// Found by `schema-form.property.test.ts` "parses an untouched submission back to the same value" (seed 220508386, path 1366).
const inner: JsonSchema = { anyOf: [{ type: 'object', properties: { ty: { type: ['string', 'null'] } } }, { type: 'null' }] };

describe('review T-1: untouched submit with a nested object the model set to null', () => {
  it('nullable outer object: comes back {v: null}, not null', () => {
    const schema: JsonSchema = { type: 'object', properties: { s: { type: 'string' }, opts: { type: 'object', nullable: true, properties: { v: inner }, required: ['v'] } } };
    const value = { s: 'x', opts: { v: null } };
    const form = buildSchemaForm({ schema, initialValue: value });
    expect(parseSchemaForm({ form, stateValues: stateFromBlocks(form.blocks) })).toEqual({ ok: true, value });
  });

  it('optional outer object (no default): comes back {v: null}, not dropped', () => {
    const schema: JsonSchema = { type: 'object', properties: { s: { type: 'string' }, opts: { type: 'object', properties: { v: inner } } } };
    const value = { s: 'x', opts: { v: null } };
    const form = buildSchemaForm({ schema, initialValue: value });
    expect(parseSchemaForm({ form, stateValues: stateFromBlocks(form.blocks) })).toEqual({ ok: true, value });
  });
});
