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

/**
 * What a host SDK does by default when the model calls a tool it does not offer, from the same
 * sources and versions:
 * - AI SDK: the call becomes an invalid tool call whose error (`NoSuchToolError`) the model reads:
 *   `Model tried to call unavailable tool '<name>'. Available tools: <a, b, …>.`;
 * - LangChain (`ToolNode`): `Error: Tool "<name>" not found.` then `\n Please fix your mistakes.`;
 * - OpenAI Agents (`toolNotFoundBehavior` default `'raise_error'`): the run throws
 *   `ModelBehaviorError` (`Tool <name> not found in agent <agent>.`) and the model reads nothing.
 *
 * @returns the text the model reads, or `undefined` when the SDK ends the run instead.
 */
export function sdkUnknownToolText(sdk: HostSdk, toolName: string, availableTools: readonly string[]): string | undefined {
  switch (sdk) {
    case 'ai-sdk':
      return `Model tried to call unavailable tool '${toolName}'. ${availableTools.length === 0 ? 'No tools are available.' : `Available tools: ${availableTools.join(', ')}.`}`;
    case 'langchain':
      return sdkDefaultErrorText('langchain', new Error(`Tool "${toolName}" not found.`));
    case 'openai-agents':
      return undefined;
  }
}
