import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * The size DynamoDB bills an item by (docs: "Item sizes and formats"): attribute names and
 * values in UTF-8; a number is about one byte per two significant digits plus one; a list or map
 * costs 3 bytes plus 1 per element on top of its elements. Writes cost one WCU per started KB.
 */
export function itemSizeBytes(item: Record<string, AttributeValue>): number {
  let total = 0;
  for (const [name, value] of Object.entries(item))
    total += Buffer.byteLength(name, 'utf8') + valueSize(value);
  return total;
}

function numberSize(text: string): number {
  const digits = text
    .replace(/^[-+]/, '')
    .replace('.', '')
    .replace(/e.*$/i, '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

function valueSize(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S, 'utf8');
  if (value.N !== undefined) return numberSize(value.N);
  if (value.B !== undefined) return value.B.length;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((n, s) => n + Buffer.byteLength(s, 'utf8'), 0);
  if (value.NS !== undefined) return value.NS.reduce((n, s) => n + numberSize(s), 0);
  if (value.L !== undefined) return 3 + value.L.reduce((n, v) => n + 1 + valueSize(v), 0);
  if (value.M !== undefined) {
    return (
      3 +
      Object.entries(value.M).reduce((n, [k, v]) => n + 1 + Buffer.byteLength(k, 'utf8') + valueSize(v), 0)
    );
  }
  return 0;
}

/** Write capacity units of a put/update that leaves an item of `bytes` (the larger of old and new). */
export function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 1024));
}
