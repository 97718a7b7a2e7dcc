import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSqsServer } from 'local-aws-sqs';
import { LOCAL_ACCOUNT_ID } from '../lambda-context.ts';
import type { LocalService } from '../service.ts';

/**
 * local-aws-sqs (the current JSON protocol), unless `AWS_ENDPOINT_URL_SQS` names one to share.
 * In memory by design: the ledger is the source of truth and the reconciler re-enqueues
 * reserved and overdue rows, so queue contents may be lost on restart.
 */
export const sqsService: LocalService = {
  name: 'sqs',
  external: (env) => env.AWS_ENDPOINT_URL_SQS || undefined,
  async start({ region }) {
    const server = await createSqsServer({
      port: 0,
      hostname: '127.0.0.1',
      region,
      accountId: LOCAL_ACCOUNT_ID,
    });
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      env: { AWS_ENDPOINT_URL_SQS: endpoint },
      endpoint,
      describe: 'started (local-aws-sqs, in memory)',
      stop: () => closeServer(server),
    };
  },
};

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolveClose) => {
    server.close(() => resolveClose());
    // Long polls in progress would otherwise hold close() for their full wait.
    server.closeAllConnections();
  });
}
