import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ArgvTemplateError, parseTemplateElement, renderArgv, templatePlaceholders } from './argv-template.js';

describe('renderArgv', () => {
  it('substitutes placeholders inside elements, one argument per element', () => {
    expect(
      renderArgv(['kubectl', 'rollout', 'restart', 'deployment/{service}', '-n', '{namespace}'], {
        service: 'api',
        namespace: 'prod',
      }),
    ).toEqual(['kubectl', 'rollout', 'restart', 'deployment/api', '-n', 'prod']);
  });

  it.each(['x; rm -rf /', '$(id)', '`id`', 'a b  c', "it's \"quoted\"", '*', '{service}', '{{'])(
    'keeps %j as one literal argument',
    (value) => {
      expect(renderArgv(['echo', '{value}', 'prefix-{value}'], { value })).toEqual(['echo', value, `prefix-${value}`]);
    },
  );

  it('never splits or merges arguments, whatever the values', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (first, second) => {
        const argv = renderArgv(['cmd', '{first}', '--flag={second}', '{{{first}}}'], { first, second });
        expect(argv).toEqual(['cmd', first, `--flag=${second}`, `{${first}}`]);
      }),
    );
  });

  it('renders numbers and booleans', () => {
    expect(renderArgv(['scale', '--replicas={replicas}', '--dry-run={dryRun}'], { replicas: 3, dryRun: false })).toEqual([
      'scale',
      '--replicas=3',
      '--dry-run=false',
    ]);
  });

  it('drops a whole-element placeholder whose value is undefined', () => {
    expect(renderArgv(['kubectl', 'get', 'pods', '{selector}'], { selector: undefined })).toEqual(['kubectl', 'get', 'pods']);
    expect(renderArgv(['kubectl', 'get', 'pods', '{selector}'], {})).toEqual(['kubectl', 'get', 'pods']);
  });

  it('keeps an empty string value as an (empty) argument', () => {
    expect(renderArgv(['echo', '{value}'], { value: '' })).toEqual(['echo', '']);
  });

  it('throws when a partial element has no value, rather than running a different command', () => {
    expect(() => renderArgv(['scale', '--replicas={replicas}'], {})).toThrow(ArgvTemplateError);
    expect(() => renderArgv(['scale', '--replicas={replicas}'], {})).toThrow('no value for {replicas}');
  });

  it('turns {{ and }} into literal braces', () => {
    expect(renderArgv(['kubectl', '-o', 'jsonpath={{.items[*].metadata.{field}}}'], { field: 'name' })).toEqual([
      'kubectl',
      '-o',
      'jsonpath={.items[*].metadata.name}',
    ]);
  });

  it('ignores inherited properties such as {constructor}', () => {
    expect(renderArgv(['echo', '{constructor}'], {})).toEqual(['echo']);
  });
});

describe('parseTemplateElement', () => {
  it.each(['{', '}', 'a{b', '{1x}', '{ name }', 'jsonpath={.items}'])('rejects the stray brace in %j', (element) => {
    expect(() => parseTemplateElement(element)).toThrow(ArgvTemplateError);
  });

  it('lists placeholder names in order', () => {
    expect(templatePlaceholders('{a}-{b}-{{c}}-{a}')).toEqual(['a', 'b', 'a']);
  });
});
