import { describe, expect, it } from 'vitest';
import type { JsonSchema } from './json-schema.js';
import { buildSchemaForm, parseSchemaForm, type SchemaForm } from './schema-form.js';
import { inputBlockAt, stateFromBlocks, type StateValues } from './view-state.test-support.js';

/**
 * An object parameter with a default of its own (pydantic `opts: Opts = Opts(force=True)` writes
 * `default: {force: true, grace: 30}` on `opts`). The server fills a left-out object with that
 * default, and only what it lacks with the defaults of the object's properties; the form shows and
 * sends the same.
 */
const schema: JsonSchema = {
  type: 'object',
  properties: {
    service: { type: 'string' },
    opts: {
      type: 'object',
      default: { force: true },
      properties: { force: { type: 'boolean', default: false }, grace: { type: 'integer', default: 30 } },
    },
    config: {
      type: 'object',
      default: { mode: 'fast', limits: { cpu: 2 } },
      properties: {
        mode: { type: 'string' },
        limits: { type: 'object', properties: { cpu: { type: 'integer', default: 1 }, mem: { type: 'integer', default: 512 } } },
      },
    },
  },
  required: ['service'],
};

function shown(form: SchemaForm): Record<string, unknown> {
  return Object.fromEntries(
    ['opts.force', 'opts.grace', 'config.mode', 'config.limits.cpu', 'config.limits.mem'].map((path) => {
      const element = inputBlockAt(form, path).element as { type: string; initial_value?: string; initial_options?: unknown[] };
      return [path, element.type === 'checkboxes' ? (element.initial_options ?? []).length > 0 : element.initial_value];
    }),
  );
}

function typed(form: SchemaForm, dottedPath: string, state: Record<string, unknown>): StateValues {
  const values = stateFromBlocks(form.blocks);
  const block = inputBlockAt(form, dottedPath);
  values[block.block_id!] = { [block.element.action_id!]: { type: block.element.type, ...state } };
  return values;
}

describe('an object parameter with a default of its own, left out by the model', () => {
  const form = buildSchemaForm({ schema, initialValue: { service: 'api' } });

  it('shows what its default holds, and the defaults of its properties where it holds nothing', () => {
    expect(shown(form)).toEqual({ 'opts.force': true, 'opts.grace': '30', 'config.mode': 'fast', 'config.limits.cpu': '2', 'config.limits.mem': '512' });
  });

  it('stays left out when submitted untouched', () => {
    expect(parseSchemaForm({ form, stateValues: stateFromBlocks(form.blocks) })).toEqual({ ok: true, value: { service: 'api' } });
  });

  it('keeps what its default holds when another of its inputs changes, and leaves out what only a property default filled', () => {
    expect(parseSchemaForm({ form, stateValues: typed(form, 'opts.grace', { value: '10' }) })).toEqual({ ok: true, value: { service: 'api', opts: { force: true, grace: 10 } } });
    expect(parseSchemaForm({ form, stateValues: typed(form, 'opts.force', { selected_options: [] }) })).toEqual({ ok: true, value: { service: 'api', opts: { force: false } } });
  });

  it('… one level down too', () => {
    expect(parseSchemaForm({ form, stateValues: typed(form, 'config.mode', { value: 'slow' }) })).toEqual({
      ok: true,
      value: { service: 'api', config: { mode: 'slow', limits: { cpu: 2 } } },
    });
    expect(parseSchemaForm({ form, stateValues: typed(form, 'config.limits.mem', { value: '1024' }) })).toEqual({
      ok: true,
      value: { service: 'api', config: { mode: 'fast', limits: { cpu: 2, mem: 1024 } } },
    });
  });

  it('is not applied to an object the model sent, even empty', () => {
    const sent = buildSchemaForm({ schema, initialValue: { service: 'api', opts: {} } });
    expect(shown(sent)['opts.force']).toBe(false);
    expect(parseSchemaForm({ form: sent, stateValues: stateFromBlocks(sent.blocks) })).toEqual({ ok: true, value: { service: 'api', opts: {} } });
  });

  it('fills a form opened without a value, explicitly', () => {
    const fresh = buildSchemaForm({ schema });
    expect(shown(fresh)).toEqual(shown(form));
    const values = typed(fresh, 'service', { value: 'api' });
    expect(parseSchemaForm({ form: fresh, stateValues: values })).toEqual({
      ok: true,
      value: { service: 'api', opts: { force: true, grace: 30 }, config: { mode: 'fast', limits: { cpu: 2, mem: 512 } } },
    });
  });
});
