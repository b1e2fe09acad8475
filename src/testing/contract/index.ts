/**
 * The contract suites every `Stores` backend passes (shipped in `toolrun/testing`; they import
 * vitest, which users running them already have as a dev dependency).
 */
export { describeStoresContract } from './describe-stores-contract.ts';
export { describeConversationStoreContract } from './conversation-store-contract.ts';
export { describeRunStoreContract } from './run-store-contract.ts';
export { describeIdempotencyLedgerContract } from './idempotency-ledger-contract.ts';
export { describeBreakerStateStoreContract } from './breaker-state-store-contract.ts';
export { describeDeadLetterQueueContract, describeDeadLetterQueuesContract } from './dead-letter-queue-contract.ts';
export { describeRunQueueContract } from './run-queue-contract.ts';
export { describeClaimStoreContract, type ClaimStoreContractOptions } from './claim-store-contract.ts';
export { describeExactValuesContract } from './exact-values-contract.ts';
export { useStoresHarness, type FakeClockLike, type MakeStores, type StoresContractHarness } from './stores-contract-harness.ts';
