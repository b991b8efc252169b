import type { JsonSchema } from '../../../slack/modals/json-schema.js';

/**
 * A tool input schema with every kind of field the bot's schema form has an element for, and an
 * input the model might propose for it.
 */
export const RICH_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    deployment: { type: 'string', minLength: 1, maxLength: 253, description: 'Name of the Deployment to restart' },
    namespace: { type: 'string', enum: ['staging', 'production'] },
    cluster: { type: 'string', enum: ['eu-1', 'eu-2', 'eu-3', 'us-1', 'us-2', 'us-3', 'ap-1'] },
    replicas: { type: 'integer', minimum: 0, maximum: 50 },
    timeout_seconds: { type: 'number', minimum: 0.5 },
    flags: { type: 'array', items: { type: 'string', enum: ['wait', 'dry_run'] } },
    regions: { type: 'array', items: { type: 'string', enum: ['eu-west-1', 'us-east-1', 'ap-south-1', 'us-west-2', 'eu-central-1', 'sa-east-1', 'ap-northeast-1', 'ca-central-1', 'me-south-1', 'af-south-1', 'eu-north-1'] } },
    strategy: { type: 'string', enum: ['rolling', 'recreate'] },
    wait: { type: 'boolean' },
    force: { type: ['boolean', 'null'] },
    window_date: { type: 'string', format: 'date' },
    window_time: { type: 'string', format: 'time' },
    not_before: { type: 'string', format: 'date-time' },
    notify_email: { type: 'string', format: 'email' },
    runbook_url: { type: 'string', format: 'uri' },
    reason: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    limits: { type: 'object', properties: { cpu: { type: 'string' }, memory_mb: { type: 'integer', minimum: 64 } }, required: ['cpu'] },
    extra: { type: 'object', additionalProperties: true },
  },
  required: ['deployment', 'namespace', 'replicas'],
  additionalProperties: false,
};

export const PROPOSED_INPUT = {
  deployment: 'payments-api',
  namespace: 'staging',
  cluster: 'eu-2',
  replicas: 3,
  flags: ['wait'],
  regions: ['eu-west-1', 'us-east-1'],
  wait: true,
  force: null,
  window_date: '2025-01-16',
  window_time: '06:30',
  not_before: '2025-01-16T06:30:00Z',
  notify_email: 'oncall@example.com',
  runbook_url: 'https://runbooks.example.com/payments-api',
  reason: 'Canary first;\nfull rollout after smoke tests.',
  tags: ['canary', 'payments'],
  limits: { cpu: '500m', memory_mb: 256 },
  extra: { annotate: true },
};

/** Every element type the schema form uses; the Edit modal of RICH_SCHEMA must show them all. */
export const SCHEMA_FORM_ELEMENT_TYPES = [
  'checkboxes', 'datepicker', 'datetimepicker', 'email_text_input', 'multi_static_select', 'number_input',
  'plain_text_input', 'radio_buttons', 'static_select', 'timepicker', 'url_text_input',
];
