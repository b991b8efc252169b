import { describe, expect, it } from 'vitest';
import { issuesResponse } from './issues-response.js';

describe('issuesResponse', () => {
  it('never answers with an empty errors object: with no field for an issue, it goes on the first input of the view', () => {
    const response = issuesResponse({
      issues: [{ path: ['config', 'replicas'], message: 'is required' }] as never,
      form: { fields: [], inputBlockIds: [] },
      view: { blocks: [{ type: 'section', block_id: 'note' }, { type: 'input', block_id: 'f:1' }] },
    });
    expect(response).toEqual({ response_action: 'errors', errors: { 'f:1': 'config.replicas: is required' } });
  });
});
