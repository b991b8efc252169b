import { describe, expect, it } from 'vitest';
import type { StoredAuditEvent } from './audit-event.js';
import { auditTableLines, formatAuditJsonLines, formatAuditTable } from './format-audit-table.js';

const at = Date.UTC(2024, 4, 1, 12, 0, 3);
const now = at + 2 * 60 * 60 * 1000;

const decision: StoredAuditEvent = {
  id: `${at}-0`,
  type: 'decision',
  at,
  teamId: 'T1',
  stepId: 'step-1',
  approvalId: 'apv-1',
  toolName: 'restart_service',
  outcome: 'approved',
  userId: 'UBOB',
  originalInput: { service: 'api' },
  editedInput: { service: 'web' },
  reason: 'planned\nmaintenance',
};

const execution: StoredAuditEvent = {
  id: `${at + 65_000}-0`,
  type: 'tool-executed',
  at: at + 65_000,
  toolName: 'restart_service',
  toolCallId: 'call-1',
  channel: 'C1',
  threadTs: '1714564803.000100',
  status: 'error',
  exitCode: 2,
  durationMs: 1_500,
  error: 'unit \u001b[31mnot found',
};

describe('formatAuditTable', () => {
  it('lines events up under headers, in UTC, with what each one was about', () => {
    expect(formatAuditTable([decision, execution], { now })).toBe(
      [
        'TIME (UTC)           AGE  TYPE           TOOL             WHO   RESULT    DETAILS',
        '2024-05-01 12:00:03  2h   decision       restart_service  UBOB  approved  reason "planned\\nmaintenance" · edited to {"service":"web"} from {"service":"api"}',
        '2024-05-01 12:01:08  1h   tool-executed  restart_service  -     error     exit 2 · took 1.5s · error "unit \\u001b[31mnot found" · in C1/1714564803.000100',
        '',
      ].join('\n'),
    );
  });

  it('keeps each event on one line, without terminal escapes, however long its details', () => {
    const noisy: StoredAuditEvent = {
      ...decision,
      toolName: 'a_tool_with_a_remarkably_long_name_indeed',
      editedInput: undefined,
      originalInput: { script: 'x'.repeat(500) },
      reason: undefined,
      userId: 'U\u001b[2J\nMALLORY',
    };
    const table = formatAuditTable([noisy], { now, detailsWidth: 40 });
    const [, row] = table.split('\n');
    expect(table.split('\n')).toHaveLength(3);
    expect(row).not.toContain('\u001b');
    expect(row).toContain('a_tool_with_a_remarkabl… ');
    expect(row).toMatch(/input \{"script":"x+…$/);
    expect(row!.length).toBeLessThan(40 + 100);
  });

  it('shows bidirectional controls in a reason as escapes, so the reviewer reads the characters in their order', () => {
    // "Trojan Source": U+202E makes the tail of the reason display reversed, as "approved".
    const reordered: StoredAuditEvent = { ...decision, outcome: 'denied', editedInput: undefined, reason: 'ok \u202edevorppa\u202c', userId: 'UEVE\u2066' };
    const [, row] = formatAuditTable([reordered], { now }).split('\n');
    expect(row).not.toMatch(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
    expect(row).toContain('reason "ok \\u202edevorppa\\u202c"');
    expect(row).toContain('UEVE\\u2066');
  });

  it("shows an answer first, and where a decision or edit happened when the record says", () => {
    const answered: StoredAuditEvent = { ...decision, toolName: 'ask_user', outcome: 'answered', editedInput: undefined, reason: undefined, originalInput: { question: 'Which?' }, answer: 'eu', channel: 'C1', threadTs: '1.1' };
    const edited: StoredAuditEvent = { id: `${at}-1`, type: 'input-edited', at, stepId: 'step-1', approvalId: 'apv-1', toolName: 'restart_service', userId: 'UBOB', channel: 'C1', threadTs: '1.1', version: 1, inputHash: 'h', input: { service: 'web' }, changes: [] };
    const [, answerRow, editRow] = formatAuditTable([answered, edited], { now }).split('\n');
    expect(answerRow).toContain('answered  answer "eu" · input {"question":"Which?"} · in C1/1.1');
    expect(editRow).toContain('version 2 · input {"service":"web"} · in C1/1.1');
  });

  it('says so when there is nothing to show', () => {
    expect(formatAuditTable([], { now })).toBe('No audit events.\n');
  });

  it('describes every kind of event in words', () => {
    const common = { id: '1-0', at, toolName: 'deploy' };
    const events: StoredAuditEvent[] = [
      { ...common, type: 'approval-requested', stepId: 's', approvalId: 'a', input: { tag: 'v2' }, requesterId: 'UALICE', channel: 'C1', threadTs: '1.2', approvers: '@ops', expiresAt: at + 600_000 },
      { ...common, type: 'unauthorized-attempt', stepId: 's', approvalId: 'a', userId: 'UEVE', action: 'approve', reason: 'not an approver' },
      { ...common, type: 'expired', stepId: 's', approvalId: 'a' },
      { ...common, type: 'grant-created', grantId: 'g1', scope: 'thread', channel: 'C1', threadTs: '1.2', userId: 'UBOB', expiresAt: at + 3_600_000, identicalArgumentsOnly: true },
      { ...common, type: 'auto-approved', channel: 'C1', threadTs: '1.2', input: {}, mode: 'channel', grantId: 'g1', requesterId: 'UDAVE' },
      { ...common, type: 'grant-used', grantId: 'g1', scope: 'channel', channel: 'C1', userId: 'UDAVE', grantedBy: 'UBOB', expiresAt: at + 3_600_000, identicalArgumentsOnly: false },
      { ...common, type: 'input-edited', stepId: 's', approvalId: 'a', userId: 'UBOB', version: 1, inputHash: 'h1', input: { tag: 'v3' }, changes: ['tag: "v2" → "v3"'] },
      { ...common, type: 'action-refused', stepId: 's', approvalId: 'a', userId: 'UEVE', action: 'approve', code: 'stale', reason: 'the input changed' },
      { ...common, type: 'action-refused', channel: 'C1', userId: 'UPARTNER', action: 'request', code: 'external-user', reason: 'not a member' },
      {
        ...common,
        type: 'decision',
        stepId: 's',
        approvalId: 'a',
        outcome: 'approved',
        userId: 'UCAROL',
        originalInput: { tag: 'v2' },
        editedInput: { tag: 'v3' },
        version: 1,
        inputHash: 'h1',
        approvedBy: ['UBOB', 'UCAROL'],
        versions: [
          { version: 0, inputHash: 'h0', input: { tag: 'v2' }, at },
          { version: 1, inputHash: 'h1', input: { tag: 'v3' }, editedBy: 'UBOB', at, changes: ['tag: "v2" → "v3"'] },
        ],
      },
      { ...common, type: 'tool-started', toolCallId: 'c1', channel: 'C1', threadTs: '1.2', input: { tag: 'v3' }, inputHash: 'h1', basis: { kind: 'approval', stepId: 's', approvalId: 'a', version: 1, inputHash: 'h1', approvedBy: ['UBOB', 'UCAROL'] } },
    ];
    const rows = formatAuditTable(events, { now, detailsWidth: 400 }).split('\n').slice(1, -1);
    expect(rows.map((row) => row.slice(21).replace(/\s+/g, ' '))).toEqual([
      '2h approval-requested deploy UALICE requested input {"tag":"v2"} · approvers @ops · expires 2024-05-01 12:10:03 · in C1/1.2',
      '2h unauthorized-attempt deploy UEVE refused tried to approve: not an approver',
      '2h expired deploy - expired step s',
      '2h grant-created deploy UBOB created thread grant in C1/1.2 · until 2024-05-01 13:00:03 · identical arguments only · grant g1',
      '2h auto-approved deploy - auto allowed in this channel · grant g1 · for UDAVE · input {} · in C1/1.2',
      '2h grant-used deploy UDAVE used channel grant in C1 · granted by UBOB · until 2024-05-01 13:00:03 · any arguments · grant g1',
      '2h input-edited deploy UBOB edited version 2 · changed tag: "v2" → "v3" · input {"tag":"v3"}',
      '2h action-refused deploy UEVE refused tried to approve (stale): the input changed',
      '2h action-refused deploy UPARTNER refused tried to request (external-user): not a member · in C1',
      '2h decision deploy UCAROL approved of version 2 · approved by UBOB, UCAROL · edited to {"tag":"v3"} from {"tag":"v2"} · versions 1 (model) {"tag":"v2"}; 2 by UBOB {"tag":"v3"}',
      '2h tool-started deploy - started on approval of version 2 by UBOB, UCAROL (step s) · input {"tag":"v3"} · in C1/1.2',
    ]);
  });
});

describe('an interrupted call', () => {
  it('shows that it was interrupted, with no exit or duration: its process stopped while it ran', () => {
    const interrupted: StoredAuditEvent = { ...execution, status: 'interrupted', error: 'stopped while it ran' };
    delete (interrupted as { exitCode?: unknown }).exitCode;
    delete (interrupted as { durationMs?: unknown }).durationMs;
    expect(formatAuditTable([interrupted], { now }).split('\n')[1]).toBe(
      '2024-05-01 12:01:08  1h   tool-executed  restart_service  -    interrupted  error "stopped while it ran" · in C1/1714564803.000100',
    );
  });
});

describe('formatAuditJsonLines', () => {
  it('prints one complete JSON event per line', () => {
    const output = formatAuditJsonLines([decision, execution]);
    expect(output.endsWith('\n')).toBe(true);
    expect(output.trimEnd().split('\n').map((line) => JSON.parse(line) as unknown)).toEqual([decision, execution]);
    expect(output.split('\n')[0]).toBe(
      `{"id":"${at}-0","type":"decision","at":${at},"teamId":"T1","stepId":"step-1","approvalId":"apv-1","toolName":"restart_service","outcome":"approved","userId":"UBOB","originalInput":{"service":"api"},"editedInput":{"service":"web"},"reason":"planned\\nmaintenance"}`,
    );
  });

  it('escapes the controls JSON.stringify leaves raw, and parses back to the same text', () => {
    // C1 CSI (U+009B) and OSC (U+009D) act in UTF-8 terminals; U+202E reverses what follows on screen.
    const hostile: StoredAuditEvent = {
      ...decision,
      outcome: 'denied',
      originalInput: { service: 'api\u009b2J\u009b31mAPPROVED\u007f' },
      reason: 'looks fine \u009d0;pwned\u009c \u202edevorppa\u202c \u2066x\u2069 \u061c\u200e\u200f \u2028\u2029',
      userId: 'UMALLORY',
    };
    const output = formatAuditJsonLines([hostile]);
    expect(output).not.toMatch(/[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/);
    expect(output).toContain('"service":"api\\u009b2J\\u009b31mAPPROVED\\u007f"');
    expect(output).toContain('\\u202edevorppa\\u202c');
    expect(output.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(output)).toEqual(hostile);
  });

  it('prints nothing for no events, so a SIEM sees no blank record', () => {
    expect(formatAuditJsonLines([])).toBe('');
  });
});

describe('formatAuditTable with damaged entries', () => {
  it('shows an entry whose fields do not fit its type as JSON, and one with an impossible `at` at its entry time', () => {
    const noChanges = { id: `${at}-1`, type: 'input-edited', at, toolName: 'deploy' } as unknown as StoredAuditEvent;
    const farAt = { id: `${at}-2`, type: 'note', at: 1e20 } as unknown as StoredAuditEvent;
    const table = formatAuditTable([decision, noChanges, farAt], { now, detailsWidth: 200 });
    const lines = table.split('\n');
    expect(lines[2]).toContain('"type":"input-edited"');
    expect(lines[3]).toMatch(/^2024-05-01 12:00:03 +2h +note .*\(no event time: the entry's\)/);
  });
});

describe('auditTableLines on a long window', () => {
  it('lines up 200,000 rows (column widths are not found by spreading every row into one call, which overflows the stack past about 120,000)', () => {
    const events = Array.from({ length: 200_000 }, (_, index) => ({ ...decision, id: `${at + index}-0`, at: at + index }));
    let lines = 0;
    for (const line of auditTableLines(events, { now })) lines += line.endsWith('\n') ? 1 : 0;
    expect(lines).toBe(200_001);
  }, 60_000);
});
