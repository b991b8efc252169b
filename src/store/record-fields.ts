/**
 * The fields of a record the stores keep as JSON text (a take-back, a card refresh), for its parser
 * to check: none for text that is not a JSON object, which no such record is.
 */
export function recordFields(record: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(record);
  } catch {
    return {};
  }
  return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
}
