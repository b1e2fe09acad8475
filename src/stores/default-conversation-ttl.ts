/** Seven days in milliseconds: the default time to live of a stored conversation in every backend. */
export const DEFAULT_CONVERSATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
