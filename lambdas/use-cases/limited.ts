/** How many ledger or provider requests one invocation keeps in flight at once. */
export const PARALLEL = 16;

/**
 * Runs `fn` over `items`, `limit` at a time, in order of start; returns the errors by index
 * instead of throwing, so one item's failure neither stops nor fails the others.
 */
export async function forEachLimited<T>(
  items: readonly T[],
  fn: (item: T, index: number) => Promise<void>,
  limit = PARALLEL,
): Promise<[number, unknown][]> {
  const errors: [number, unknown][] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        try {
          await fn(items[index] as T, index);
        } catch (error) {
          errors.push([index, error]);
        }
      }
    }),
  );
  return errors;
}
