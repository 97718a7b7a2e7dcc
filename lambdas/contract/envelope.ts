/**
 * The KMS encryption context every envelope data key is bound to: the KMS adapter asks for it
 * (lambdas/adapters/crypto/kms-data-key-source.ts) and the CDK grants Decrypt/GenerateDataKey
 * only under it (lib/constructs/notice-function.ts), so the roles cannot use the key otherwise.
 */
export const ENVELOPE_ENCRYPTION_CONTEXT = { purpose: 'notice-ledger-envelope' } as const;
