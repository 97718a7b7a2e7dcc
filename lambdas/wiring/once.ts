/**
 * A process-wide value built on first use (a Lambda cold start, or the local stack's first call
 * into that function). A failed build is not cached: the next invocation tries again, so a
 * secret filled in after the deploy is picked up without a redeploy.
 */
export function once<T>(build: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= build().catch((error: unknown) => {
      value = undefined;
      throw error;
    });
    return value;
  };
}
