export * from './messages.ts';
export * from './run-agent.ts';
export * from './run-state.ts';
export { DEFAULT_MODEL_POLICY, type ModelFailureInfo, type ModelFailureReason, type ModelPolicy, type ModelPolicyOptions } from './model-policy.ts';
