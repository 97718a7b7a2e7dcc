import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

/** The account every local ARN names; local-aws-sqs is started with it too, so ARNs agree. */
export const LOCAL_ACCOUNT_ID = '000000000000';

/**
 * A Lambda `Context` for one local invocation. Powertools reads `functionName`,
 * `awsRequestId` and friends into every log line, and handlers may budget work with
 * `getRemainingTimeInMillis`, so the values look like the real ones. Nothing enforces the
 * timeout locally: the number only informs the handler.
 */
export function lambdaContext(functionName: string, timeoutMs: number, region: string): Context {
  const deadline = Date.now() + timeoutMs;
  const requestId = randomUUID();
  const unsupported = () => {
    throw new Error('the callback-style Context methods are not supported by the local stack');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:${LOCAL_ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/[$LATEST]${requestId.replaceAll('-', '')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}
