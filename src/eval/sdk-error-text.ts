/**
 * What a model reads after a failed tool call when the host SDK handles the failure with its
 * defaults, reproduced from each SDK's source (the versions below): the "before" arm of the eval.
 */

/** The host SDKs whose default error text the eval reproduces, with the version read. */
export const SDK_DEFAULT_ERROR_TEXT_VERSIONS = {
  'ai-sdk': 'ai 6.0.326',
  langchain: 'langchain 1.5.14',
  'openai-agents': '@openai/agents-core 0.20.0',
} as const;

/** A host SDK of {@link SDK_DEFAULT_ERROR_TEXT_VERSIONS}. */
export type HostSdk = keyof typeof SDK_DEFAULT_ERROR_TEXT_VERSIONS;

/**
 * The tool message a host SDK shows the model by default for an error thrown by a tool:
 * - AI SDK (`createToolModelOutput`, `errorMode: 'text'`): `getErrorMessage(error)` of
 *   `@ai-sdk/provider` — the error's `message` (a string as is; `unknown error` for null);
 * - LangChain (`ToolNode`, `handleToolErrors` default): `${error}\n Please fix your mistakes.`
 *   (`String(error)`: `Error: <message>`);
 * - OpenAI Agents (`defaultToolErrorFunction`): a fixed text that never reads the error.
 */
export function sdkDefaultErrorText(sdk: HostSdk, error: unknown): string {
  switch (sdk) {
    case 'ai-sdk':
      if (error === null || error === undefined) return 'unknown error';
      if (typeof error === 'string') return error;
      if (error instanceof Error) return error.message;
      return JSON.stringify(error);
    case 'langchain':
      return `${String(error)}\n Please fix your mistakes.`;
    case 'openai-agents':
      return 'An error occurred while running the tool. Please try again.';
  }
}
