/**
 * `ListObjectsV2`, answered by the local store's front from its journal (./journal.ts) rather
 * than by s3rver, whose listing misses common prefixes more than one level below the prefix (its
 * walk prunes those directories before it sees their objects), names every object STANDARD
 * whatever its class, and would list a write still in flight. As S3 lists: keys in UTF-8 binary
 * order, after `start-after` or the continuation token; with a delimiter, each common prefix once,
 * counted with the keys against `max-keys` (at most 1000); `encoding-type=url` encodes keys.
 */
import type { StoredObject } from './journal.ts';
import { type Answer, element, S3_NS, s3Error, xmlAnswer } from './xml.ts';

const MAX_KEYS = 1000;

export function listObjectsV2(
  bucket: string,
  objects: ReadonlyMap<string, StoredObject>,
  query: URLSearchParams,
): Answer {
  const prefix = query.get('prefix') ?? '';
  const delimiter = query.get('delimiter') ?? '';
  const rawMax = query.get('max-keys');
  if (rawMax !== null && !/^\d+$/.test(rawMax)) {
    return s3Error(
      'GET',
      400,
      'InvalidArgument',
      'Provided max-keys not an integer or within integer range',
      {
        ArgumentName: 'max-keys',
        ArgumentValue: rawMax,
      },
    );
  }
  const maxKeys = Math.min(MAX_KEYS, rawMax === null ? MAX_KEYS : Number(rawMax));
  const token = query.get('continuation-token');
  const after = token !== null ? fromToken(token) : (query.get('start-after') ?? '');
  if (after === undefined) {
    return s3Error('GET', 400, 'InvalidArgument', 'The continuation token provided is incorrect', {
      ArgumentName: 'continuation-token',
    });
  }
  const url = query.get('encoding-type') === 'url';
  const name = (text: string) => (url ? encodeURIComponent(text).replace(/%2F/g, '/') : text);

  const afterBytes = Buffer.from(after, 'utf8');
  const keys = [...objects.keys()]
    .filter((key) => key.startsWith(prefix))
    .map((key) => ({ key, bytes: Buffer.from(key, 'utf8') }))
    .filter(({ bytes }) => Buffer.compare(bytes, afterBytes) > 0)
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
    .map(({ key }) => key);
  const entries: ({ key: string; object: StoredObject } | { commonPrefix: string })[] = [];
  let lastPrefix: string | undefined;
  for (const key of keys) {
    if (entries.length > maxKeys) break;
    const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
    if (cut < 0) {
      entries.push({ key, object: objects.get(key) as StoredObject });
      continue;
    }
    const commonPrefix = key.slice(0, cut + delimiter.length);
    // A continuation token may be a common prefix already answered: its keys sort after it.
    if (commonPrefix === lastPrefix || compareUtf8(commonPrefix, after) <= 0) continue;
    lastPrefix = commonPrefix;
    entries.push({ commonPrefix });
  }
  const truncated = entries.length > maxKeys;
  const page = entries.slice(0, maxKeys);
  const last = page[page.length - 1];
  const next = truncated && last ? ('key' in last ? last.key : last.commonPrefix) : undefined;

  const contents = page
    .flatMap((e) =>
      'key' in e
        ? [
            `<Contents>${element('Key', name(e.key))}${element('LastModified', e.object.lastModified)}${element('ETag', e.object.etag)}${element('Size', e.object.size)}${query.get('fetch-owner') === 'true' ? '<Owner><ID>local</ID></Owner>' : ''}${element('StorageClass', e.object.storageClass)}</Contents>`,
          ]
        : [],
    )
    .join('');
  const prefixes = page
    .flatMap((e) =>
      'commonPrefix' in e
        ? [`<CommonPrefixes>${element('Prefix', name(e.commonPrefix))}</CommonPrefixes>`]
        : [],
    )
    .join('');
  return xmlAnswer(
    200,
    `<ListBucketResult xmlns="${S3_NS}">${element('Name', bucket)}${element('Prefix', name(prefix))}${
      delimiter ? element('Delimiter', name(delimiter)) : ''
    }${element('MaxKeys', maxKeys)}${url ? element('EncodingType', 'url') : ''}${element('KeyCount', page.length)}${element(
      'IsTruncated',
      truncated,
    )}${token !== null ? element('ContinuationToken', token) : ''}${next !== undefined ? element('NextContinuationToken', toToken(next)) : ''}${
      token === null && query.has('start-after') ? element('StartAfter', name(after)) : ''
    }${contents}${prefixes}</ListBucketResult>`,
  );
}

/** S3 orders keys by their UTF-8 bytes. */
function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function toToken(after: string): string {
  return Buffer.from(`local:${after}`, 'utf8').toString('base64');
}

function fromToken(token: string): string | undefined {
  const text = Buffer.from(token, 'base64').toString('utf8');
  return text.startsWith('local:') ? text.slice('local:'.length) : undefined;
}
