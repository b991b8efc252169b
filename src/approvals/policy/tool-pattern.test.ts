import { describe, expect, it } from 'vitest';
import { compileToolPattern } from './tool-pattern.js';

describe('compileToolPattern', () => {
  it.each([
    ['restart_service', 'restart_service', true],
    ['restart_service', 'restart_services', false],
    ['restart_*', 'restart_service', true],
    ['restart_*', 'restart_', true],
    ['restart_*', 'k8s.restart_service', false],
    ['*', 'list_pods', true],
    ['*', 'k8s.list_pods', false],
    ['k8s.*', 'k8s.delete_pod', true],
    ['k8s.*', 'k8s.apps.delete', false],
    ['k8s.*', 'k8sx.delete_pod', false],
    ['k8s.**', 'k8s.apps.delete', true],
    ['**', 'github.repos.delete', true],
    ['**.delete_*', 'github.repos.delete_branch', true],
    ['*.delete_*', 'github.repos.delete_branch', false],
    ['scale_?', 'scale_a', true],
    ['scale_?', 'scale_ab', false],
    ['scale_?', 'scale_.', false],
    ['k8s-prod.get', 'k8s-prod.get', true],
    ['k8s-prod.get', 'k8s-prodxget', false],
  ])('%s against %s → %s', (pattern, toolName, expected) => {
    expect(compileToolPattern(pattern).matches(toolName)).toBe(expected);
  });

  it.each([
    ['restart_service', 15, true],
    ['restart_*', 8, false],
    ['k8s.**', 4, false],
    ['?', 0, false],
  ])('counts the literal characters of %s', (pattern, literalCharacters, exact) => {
    expect(compileToolPattern(pattern)).toMatchObject({ literalCharacters, exact });
  });
});
