// TEMPORARY stub (helper C, not committed): A's handler replaces it.
export const handler = async (): Promise<{ batchItemFailures: [] }> => ({ batchItemFailures: [] });
