/**
 * A Secrets Manager stand-in for cold-start tests: `GetSecretValue` over the service's own JSON
 * protocol (awsJson1_1, `X-Amz-Target: secretsmanager.GetSecretValue`), so the functions read their
 * secrets through the real adapter and SDK client (`AWS_ENDPOINT_URL_SECRETS_MANAGER`). An unknown
 * id answers `ResourceNotFoundException`, as the service does.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SecretsManagerStandIn {
  readonly endpoint: string;
  /** The ARN a stored secret is read under. */
  arnOf(name: string): string;
  /** Stores a secret's string value (JSON text for the functions' secrets). */
  put(name: string, value: string): string;
  /** `SecretId`s asked for, in order. */
  readonly reads: string[];
  close(): Promise<void>;
}

export async function startSecretsManager(): Promise<SecretsManagerStandIn> {
  const secrets = new Map<string, { name: string; value: string }>();
  const reads: string[] = [];
  const arnOf = (name: string) => `arn:aws:secretsmanager:us-east-1:123456789012:secret:${name}-AbCdEf`;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (status: number, body: unknown, errorType?: string) => {
        res.writeHead(status, {
          'content-type': 'application/x-amz-json-1.1',
          ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
        });
        res.end(JSON.stringify(body));
      };
      if (req.headers['x-amz-target'] !== 'secretsmanager.GetSecretValue') {
        answer(
          400,
          { __type: 'UnknownOperationException', message: 'not offered here' },
          'UnknownOperationException',
        );
        return;
      }
      const { SecretId } = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
        SecretId?: string;
      };
      reads.push(String(SecretId));
      const secret = SecretId === undefined ? undefined : secrets.get(SecretId);
      if (!secret) {
        const message = "Secrets Manager can't find the specified secret.";
        answer(400, { __type: 'ResourceNotFoundException', message }, 'ResourceNotFoundException');
        return;
      }
      answer(200, {
        ARN: arnOf(secret.name),
        Name: secret.name,
        SecretString: secret.value,
        VersionId: '00000000-0000-0000-0000-000000000001',
        VersionStages: ['AWSCURRENT'],
        CreatedDate: 1_767_225_600,
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arnOf,
    put(name, value) {
      const arn = arnOf(name);
      secrets.set(arn, { name, value });
      return arn;
    },
    reads,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
