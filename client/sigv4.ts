import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * SigV4 for the IAM-authorised HTTP API, with the AWS SDK's own signer (`@smithy/signature-v4`,
 * the one every SDK v3 client uses) and credential chain (`fromNodeProviderChain`: environment,
 * SSO, `~/.aws` profiles, process, web identity, container and instance roles). No crypto here.
 */

/** What a signer sees of a request, and the headers it answers (the request's plus the signature). */
export interface OutgoingRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | undefined;
}

export type RequestSigner = (request: OutgoingRequest) => Promise<Record<string, string>>;

export const EXECUTE_API_SERVICE = 'execute-api';

/** Fixed credentials (`{ accessKeyId, secretAccessKey, sessionToken? }`) or a provider of them. */
export type Credentials = ConstructorParameters<typeof SignatureV4>[0]['credentials'];

/** `{api-id}.execute-api.{region}.amazonaws.com` (also `.amazonaws.com.cn`); undefined for any other host. */
export function executeApiRegion(hostname: string): string | undefined {
  return /^[a-z0-9]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/i
    .exec(hostname)?.[1]
    ?.toLowerCase();
}

export interface SigV4Options {
  readonly region: string;
  /** Fixed credentials or a provider; default: the SDK's Node chain for `profile`. */
  readonly credentials?: Credentials | undefined;
  /** A named profile of `~/.aws/config` / `~/.aws/credentials` (as `--profile` of the AWS CLI). */
  readonly profile?: string | undefined;
  /** @default 'execute-api' */
  readonly service?: string | undefined;
  /** Send `x-amz-content-sha256` (signed). @default true, as the SDK does */
  readonly applyChecksum?: boolean | undefined;
  /** Fixed signing time, for tests. */
  readonly signingDate?: (() => Date) | undefined;
}

export function sigV4Signer(options: SigV4Options): RequestSigner {
  const signer = new SignatureV4({
    service: options.service ?? EXECUTE_API_SERVICE,
    region: options.region,
    credentials:
      options.credentials ?? fromNodeProviderChain(options.profile ? { profile: options.profile } : {}),
    sha256: Sha256,
    applyChecksum: options.applyChecksum ?? true,
  });
  return async (request) => {
    const query: Record<string, string | string[]> = {};
    for (const [name, value] of request.url.searchParams) {
      const seen = query[name];
      query[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
    }
    const signed = await signer.sign(
      new HttpRequest({
        method: request.method,
        protocol: request.url.protocol,
        hostname: request.url.hostname,
        ...(request.url.port ? { port: Number(request.url.port) } : {}),
        // As it goes on the wire (percent-encoded); the signer encodes each segment once more,
        // which is what SigV4 asks of every service but S3.
        path: request.url.pathname,
        query,
        // `host` is what fetch will send (with the port when there is one).
        headers: { ...request.headers, host: request.url.host },
        ...(request.body !== undefined ? { body: request.body } : {}),
      }),
      options.signingDate ? { signingDate: options.signingDate() } : {},
    );
    // fetch sets Host itself (a forbidden header); everything else goes as signed.
    const { host: _host, ...headers } = signed.headers as Record<string, string>;
    return headers;
  };
}
