/**
 * A strict front for s3rver (./server.ts): the S3 semantics the archive relies on that s3rver
 * lacks, emulated in front of it so the production S3 adapter runs unchanged against
 * `AWS_ENDPOINT_URL_S3` (local/README.md, "The archive store", says which semantics are whose):
 *
 * - conditional writes: `PutObject` with `If-None-Match: *` answers 412 PreconditionFailed when
 *   the key exists (`If-Match: <etag>` 412 when it differs, 404 when absent); checked and written
 *   under one per-key lock, so of two concurrent conditional PUTs exactly one wins;
 * - Object Lock: a bucket created with `x-amz-bucket-object-lock-enabled: true` takes
 *   `PutObjectLockConfiguration` (default retention, compliance or governance) and answers
 *   `GetObjectLockConfiguration`, `GetBucketVersioning` (Enabled) and `GetObjectRetention`;
 *   each object written there gets its retain-until date; a PUT over a retained key and a
 *   `DeleteObject(s)` of one are refused (403 AccessDenied); a PUT with Object Lock parameters
 *   without `Content-MD5` or an `x-amz-checksum-*` header is refused as S3 refuses it (400);
 * - integrity: `x-amz-checksum-crc32` / `-sha1` / `-sha256` are verified (400 BadDigest);
 * - all-or-nothing writes: an object exists once the front read it back whole and journalled it
 *   (./object-lock.ts), before it answers.
 *
 * Requests are path-style (`http://127.0.0.1:<port>/<bucket>/<key>`), which the SDK uses for an
 * IP endpoint. Signatures are not checked (s3rver does not verify SigV4): the front drops them;
 * who may do what is checked in the client by local/iam, as for every other service.
 */
import { createHash } from 'node:crypto';
import {
  Agent,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { crc32 } from 'node:zlib';
import { closeServer, forwardBuffered, listenOnLoopback } from '../loopback-server.ts';
import { objectId, type StoredObject, type StoreJournal } from './journal.ts';
import { listObjectsV2 } from './listing.ts';
import {
  isRetained,
  objectLockConfigurationXml,
  parseObjectLockConfiguration,
  type RetentionMode,
  retainUntil,
} from './object-lock.ts';
import { type Answer, element, elementTexts, emptyAnswer, S3_NS, s3Error, xmlAnswer } from './xml.ts';

export interface S3FrontOptions {
  /** s3rver's endpoint. */
  readonly upstream: string;
  readonly journal: StoreJournal;
  /** 0 (default): any free port. */
  readonly port?: number;
  readonly now?: () => number;
}

export interface S3Front {
  /** `http://127.0.0.1:<port>`: the value for `AWS_ENDPOINT_URL_S3`. */
  readonly endpoint: string;
  close(): Promise<void>;
}

/** One PUT's body, held in memory (S3's own single-PUT limit is 5 GiB; the archive's objects are KBs to MBs). */
const MAX_BODY_BYTES = 256 * 1024 * 1024;
/** How long the front waits for s3rver's file to read back whole before it gives up on a PUT. */
const READ_BACK_ATTEMPTS = 100;
const READ_BACK_PAUSE_MS = 10;

const LOCKED_MESSAGE = 'Access Denied because object protected by object lock.';

export async function startS3Front(options: S3FrontOptions): Promise<S3Front> {
  const upstream = new URL(options.upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const now = options.now ?? Date.now;
  const { journal } = options;
  const tails = new Map<string, Promise<void>>();

  /** Runs `fn` alone for `id` (a bucket/key): check-then-write is atomic per key, as S3's conditional writes are. */
  async function exclusive<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const before = tails.get(id) ?? Promise.resolve();
    let release: () => void = () => undefined;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = before.then(() => mine);
    tails.set(id, tail);
    await before;
    try {
      return await fn();
    } finally {
      release();
      if (tails.get(id) === tail) tails.delete(id);
    }
  }

  function forward(
    method: string,
    path: string,
    headers: IncomingHttpHeaders,
    body?: Buffer,
  ): Promise<Answer> {
    const sent: IncomingHttpHeaders = { ...headers, host: upstream.host };
    // s3rver knows one access key and does not verify SigV4: the front takes the signature off.
    delete sent.authorization;
    delete sent.expect;
    delete sent.connection;
    if (body) sent['content-length'] = String(body.length);
    return forwardBuffered(
      { hostname: upstream.hostname, port: upstream.port, method, path, headers: sent, agent },
      body,
    );
  }

  async function handle(req: IncomingMessage, body: Buffer): Promise<Answer> {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://front');
    const [, rawBucket = '', ...rawKey] = url.pathname.split('/');
    const bucket = decodeURIComponent(rawBucket);
    const key = rawKey.map(decodeURIComponent).join('/');
    // The SDK names the operation in `x-id`; it is not a subresource.
    const sub = [...url.searchParams.keys()].filter((k) => k !== 'x-id');
    const pass = () => forward(method, req.url ?? '/', req.headers, body);
    if (!bucket) return pass();
    const lock = journal.bucketLock(bucket);

    if (!key) {
      if (sub.includes('object-lock')) {
        if (method === 'PUT') return putObjectLockConfiguration(bucket, body);
        if (method === 'GET') {
          if (!(await bucketExists(bucket))) return noSuchBucket(method, bucket);
          return lock
            ? xmlAnswer(200, objectLockConfigurationXml(lock))
            : s3Error(
                method,
                404,
                'ObjectLockConfigurationNotFoundError',
                'Object Lock configuration does not exist for this bucket',
              );
        }
      }
      if (method === 'GET' && sub.includes('versioning') && lock) {
        // A bucket with Object Lock is versioned (S3 enables versioning with the lock).
        return xmlAnswer(
          200,
          `<VersioningConfiguration xmlns="${S3_NS}"><Status>Enabled</Status></VersioningConfiguration>`,
        );
      }
      if (method === 'POST' && sub.includes('delete')) return deleteObjects(bucket, body.toString('utf8'));
      if (method === 'GET' && url.searchParams.get('list-type') === '2') {
        if (!(await bucketExists(bucket))) return noSuchBucket(method, bucket);
        return listObjectsV2(bucket, journal.objectsOf(bucket), url.searchParams);
      }
      if (method === 'PUT' && sub.length === 0) {
        const answer = await pass();
        if (
          answer.status === 200 &&
          String(req.headers['x-amz-bucket-object-lock-enabled']).toLowerCase() === 'true'
        )
          journal.setBucketLock(bucket, { enabled: true });
        return answer;
      }
      if (method === 'DELETE' && sub.length === 0) {
        const answer = await pass();
        if (answer.status === 204 && lock) journal.setBucketLock(bucket, null);
        return answer;
      }
      return pass();
    }

    if (sub.includes('uploads') || sub.includes('uploadId')) {
      return lock
        ? s3Error(
            method,
            501,
            'NotImplemented',
            'the local store does not emulate multipart uploads into an Object Lock bucket',
          )
        : pass();
    }
    if (sub.includes('retention') || sub.includes('legal-hold')) {
      if (method === 'GET' && sub.includes('retention')) return getObjectRetention(method, bucket, key);
      return s3Error(
        method,
        501,
        'NotImplemented',
        'the local store keeps the retention its bucket default gives; it does not emulate changing it',
      );
    }
    return exclusive(objectId(bucket, key), async () => {
      if (method === 'PUT' && sub.length === 0) return putObject(req, bucket, key, body);
      if (method === 'DELETE' && sub.length === 0) {
        if (isRetained(journal.object(bucket, key), now()))
          return s3Error(method, 403, 'AccessDenied', LOCKED_MESSAGE);
        const answer = await pass();
        if (answer.status === 204) journal.deleteObject(bucket, key);
        return answer;
      }
      return pass();
    });
  }

  async function putObject(req: IncomingMessage, bucket: string, key: string, body: Buffer): Promise<Answer> {
    const method = 'PUT';
    const h = req.headers;
    const lock = journal.bucketLock(bucket);
    const existing = journal.object(bucket, key);
    const copy = h['x-amz-copy-source'] !== undefined;

    const ifNoneMatch = h['if-none-match'];
    if (ifNoneMatch !== undefined && ifNoneMatch !== '*')
      return s3Error(method, 501, 'NotImplemented', 'If-None-Match on a write takes only *');
    if (ifNoneMatch === '*' && existing)
      return s3Error(
        method,
        412,
        'PreconditionFailed',
        'At least one of the pre-conditions you specified did not hold',
        {
          Condition: 'If-None-Match',
        },
      );
    const ifMatch = h['if-match'];
    if (ifMatch !== undefined) {
      if (!existing)
        return s3Error(method, 404, 'NoSuchKey', 'The specified key does not exist.', { Key: key });
      if (ifMatch !== existing.etag)
        return s3Error(
          method,
          412,
          'PreconditionFailed',
          'At least one of the pre-conditions you specified did not hold',
          {
            Condition: 'If-Match',
          },
        );
    }
    if (String(h['content-encoding'] ?? '').includes('aws-chunked'))
      return s3Error(
        method,
        501,
        'NotImplemented',
        'the local store does not take aws-chunked bodies: give PutObject a Buffer, Uint8Array or string',
      );

    const explicitMode = h['x-amz-object-lock-mode'] as RetentionMode | undefined;
    const explicitUntil = h['x-amz-object-lock-retain-until-date'] as string | undefined;
    if ((explicitMode || explicitUntil) && !lock)
      return s3Error(method, 400, 'InvalidRequest', 'Bucket is missing Object Lock Configuration');
    if ((explicitMode || lock?.rule) && !copy && !hasIntegrityHeader(h))
      return s3Error(
        method,
        400,
        'InvalidRequest',
        'Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters',
      );
    const digest = copy ? undefined : badDigest(h, body);
    if (digest)
      return s3Error(
        method,
        400,
        'BadDigest',
        `The ${digest} you specified did not match the calculated checksum.`,
      );
    // S3 keeps the locked version and stores a new one (the bucket is versioned); this store keeps one
    // version per key, so it refuses instead (local/README.md, "The archive store").
    if (isRetained(existing, now())) return s3Error(method, 403, 'AccessDenied', LOCKED_MESSAGE);

    const answer = await forward(method, req.url ?? '/', h, body);
    if (answer.status !== 200) return answer;
    const etag = answer.headers.etag ?? elementTexts(answer.body.toString('utf8'), 'ETag')[0] ?? '';
    const stored = await readBackWhole(bucket, key, etag);
    if (!stored)
      return s3Error(method, 500, 'InternalError', 'the local store could not read the object back whole');
    const at = now();
    const retention: Pick<StoredObject, 'mode' | 'retainUntil'> =
      explicitMode && explicitUntil
        ? { mode: explicitMode, retainUntil: new Date(explicitUntil).toISOString() }
        : lock?.rule
          ? { mode: lock.rule.mode, retainUntil: retainUntil(lock.rule, at) }
          : {};
    journal.putObject(bucket, key, {
      etag,
      size: stored.size,
      lastModified: new Date(at).toISOString(),
      storageClass: String(h['x-amz-storage-class'] ?? 'STANDARD'),
      ...retention,
    });
    return answer;
  }

  /**
   * The object as s3rver serves it once it is whole (its MD5 is the ETag s3rver answered), or
   * undefined: s3rver answers a PUT before its file is flushed.
   */
  async function readBackWhole(
    bucket: string,
    key: string,
    etag: string,
  ): Promise<{ size: number } | undefined> {
    for (let i = 0; i < READ_BACK_ATTEMPTS; i++) {
      const got = await forward('GET', objectPath(bucket, key), {});
      if (got.status === 200 && `"${createHash('md5').update(got.body).digest('hex')}"` === etag)
        return { size: got.body.length };
      await new Promise((resolve) => setTimeout(resolve, READ_BACK_PAUSE_MS));
    }
    return undefined;
  }

  async function putObjectLockConfiguration(bucket: string, body: Buffer): Promise<Answer> {
    if (!(await bucketExists(bucket))) return noSuchBucket('PUT', bucket);
    const parsed = parseObjectLockConfiguration(body.toString('utf8'));
    if ('error' in parsed) return s3Error('PUT', 400, parsed.error, parsed.message);
    // S3 lets a (versioned) bucket take Object Lock after its creation too.
    journal.setBucketLock(bucket, parsed.lock);
    return emptyAnswer(200);
  }

  function getObjectRetention(method: string, bucket: string, key: string): Answer {
    const object = journal.object(bucket, key);
    if (!object) return s3Error(method, 404, 'NoSuchKey', 'The specified key does not exist.', { Key: key });
    if (!object.retainUntil)
      return s3Error(
        method,
        404,
        'NoSuchObjectLockConfiguration',
        'The specified object does not have a ObjectLock configuration',
      );
    return xmlAnswer(
      200,
      `<Retention xmlns="${S3_NS}">${element('Mode', object.mode ?? '')}${element('RetainUntilDate', object.retainUntil)}</Retention>`,
    );
  }

  async function deleteObjects(bucket: string, body: string): Promise<Answer> {
    const keys = elementTexts(body, 'Key');
    const quiet = /<Quiet>\s*true\s*<\/Quiet>/.test(body);
    const results: string[] = [];
    for (const key of keys) {
      await exclusive(objectId(bucket, key), async () => {
        if (isRetained(journal.object(bucket, key), now())) {
          results.push(
            `<Error>${element('Key', key)}${element('Code', 'AccessDenied')}${element('Message', LOCKED_MESSAGE)}</Error>`,
          );
          return;
        }
        const answer = await forward('DELETE', objectPath(bucket, key), {});
        if (answer.status === 204) {
          journal.deleteObject(bucket, key);
          if (!quiet) results.push(`<Deleted>${element('Key', key)}</Deleted>`);
        } else {
          results.push(
            `<Error>${element('Key', key)}${element('Code', 'InternalError')}${element('Message', `status ${answer.status}`)}</Error>`,
          );
        }
      });
    }
    return xmlAnswer(200, `<DeleteResult xmlns="${S3_NS}">${results.join('')}</DeleteResult>`);
  }

  async function bucketExists(bucket: string): Promise<boolean> {
    return (await forward('HEAD', `/${encodeURIComponent(bucket)}`, {})).status === 200;
  }

  function noSuchBucket(method: string, bucket: string): Answer {
    return s3Error(method, 404, 'NoSuchBucket', 'The specified bucket does not exist', {
      BucketName: bucket,
    });
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => {
      const answer =
        size > MAX_BODY_BYTES
          ? Promise.resolve(
              s3Error(
                req.method ?? 'PUT',
                400,
                'EntityTooLarge',
                'Your proposed upload exceeds the local store’s limit',
              ),
            )
          : handle(req, Buffer.concat(chunks));
      answer
        .catch((error: unknown) =>
          s3Error(
            req.method ?? 'GET',
            500,
            'InternalError',
            error instanceof Error ? error.message : String(error),
          ),
        )
        .then((a) => send(res, req.method, a));
    });
  });
  const port = await listenOnLoopback(server, options.port ?? 0);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      await closeServer(server);
      agent.destroy();
    },
  };
}

function send(res: ServerResponse, method: string | undefined, answer: Answer): void {
  if (res.destroyed) return;
  const headers = { ...answer.headers };
  for (const hop of ['transfer-encoding', 'connection', 'keep-alive']) delete headers[hop];
  // A HEAD answer says the length of what a GET would carry.
  if (method !== 'HEAD' || headers['content-length'] === undefined)
    headers['content-length'] = String(answer.body.length);
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}

function objectPath(bucket: string, key: string): string {
  return `/${encodeURIComponent(bucket)}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

function hasIntegrityHeader(headers: IncomingHttpHeaders): boolean {
  return Object.keys(headers).some((name) => name === 'content-md5' || name.startsWith('x-amz-checksum-'));
}

/** The checksum header that does not match the body, or undefined (CRC32C and CRC64NVME are not verified here). */
function badDigest(headers: IncomingHttpHeaders, body: Buffer): string | undefined {
  const crc = headers['x-amz-checksum-crc32'];
  if (typeof crc === 'string') {
    const expected = Buffer.alloc(4);
    expected.writeUInt32BE(crc32(body) >>> 0);
    if (expected.toString('base64') !== crc) return 'CRC32';
  }
  for (const [header, algorithm, name] of [
    ['x-amz-checksum-sha1', 'sha1', 'SHA1'],
    ['x-amz-checksum-sha256', 'sha256', 'SHA256'],
  ] as const) {
    const value = headers[header];
    if (typeof value === 'string' && createHash(algorithm).update(body).digest('base64') !== value)
      return name;
  }
  const md5 = headers['content-md5'];
  if (typeof md5 === 'string' && createHash('md5').update(body).digest('base64') !== md5)
    return 'Content-MD5';
  return undefined;
}
