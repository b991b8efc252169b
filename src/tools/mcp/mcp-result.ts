/**
 * What the model gets from an MCP tool call: the text of the result, bounded. Images and binary
 * resources are named, not inlined (base64 would eat the history budget and the model cannot use
 * it here); `structuredContent` is kept only when the server sent no text.
 */
export interface McpToolOutput {
  text: string;
  structuredContent?: unknown;
  truncated: boolean;
}

export interface McpCallOutcome {
  isError: boolean;
  output: McpToolOutput;
}

/**
 * `redact` is applied before anything is cut to `limit`: cutting first could leave the first half
 * of a secret, which the redactor no longer recognises.
 */
export function formatMcpResult(result: unknown, limit: number, redact: (text: string) => string = (text) => text): McpCallOutcome {
  const record = (typeof result === 'object' && result !== null ? result : {}) as Record<string, unknown>;
  const content = Array.isArray(record.content) ? (record.content as unknown[]) : [];
  const pieces = content.map(describePart).filter((piece) => piece !== '');
  let text = pieces.join('\n');
  const structured = record.structuredContent;
  // Old servers answer `{ toolResult }`.
  if (text === '' && structured === undefined && 'toolResult' in record) text = stringify(record.toolResult);
  text = redact(text);
  let truncated = false;
  if (text.length > limit) {
    text = `${text.slice(0, limit)}\n… [cut: ${text.length - limit} more characters]`;
    truncated = true;
  }
  const output: McpToolOutput = { text, truncated };
  if (text === '' && structured !== undefined) {
    const original = stringify(structured);
    const json = redact(original);
    const kept = json === original ? structured : parseOr(json);
    if (json.length <= limit && kept !== undefined) output.structuredContent = kept;
    else if (json.length <= limit) output.text = json;
    else {
      output.text = `${json.slice(0, limit)}\n… [cut: ${json.length - limit} more characters]`;
      output.truncated = true;
    }
  }
  return { isError: record.isError === true, output };
}

/** The redacted JSON read back, or undefined when redaction made it invalid (then it is passed as text). */
function parseOr(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

function describePart(part: unknown): string {
  if (typeof part !== 'object' || part === null) return '';
  const item = part as Record<string, unknown>;
  switch (item.type) {
    case 'text':
      return typeof item.text === 'string' ? item.text : '';
    case 'image':
    case 'audio':
      return `[${item.type} ${String(item.mimeType ?? '')}, ${base64Bytes(item.data)} bytes, not shown]`;
    case 'resource': {
      const resource = (item.resource ?? {}) as Record<string, unknown>;
      if (typeof resource.text === 'string') return `[resource ${String(resource.uri ?? '')}]\n${resource.text}`;
      return `[resource ${String(resource.uri ?? '')} ${String(resource.mimeType ?? '')}, ${base64Bytes(resource.blob)} bytes, not shown]`;
    }
    case 'resource_link':
      return `[link ${String(item.name ?? '')}: ${String(item.uri ?? '')}]`;
    default:
      return `[${String(item.type)} content not shown]`;
  }
}

function base64Bytes(data: unknown): number {
  return typeof data === 'string' ? Math.floor((data.replace(/=+$/, '').length * 3) / 4) : 0;
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}
