import type { ToolWarning } from '../../ground/tool-result.ts';

/** How many successes' warnings one `toAiSdk` call remembers for the model (the oldest are forgotten first). */
const REMEMBERED_SUCCESSES = 512;

/** The tool result output the model gets (the SDK's `LanguageModelV2/V3/V4ToolResultOutput`, its `text` and `json` kinds). */
export type AiSdkModelOutput = { type: 'text'; value: string } | { type: 'json'; value: unknown };

/**
 * What a tool of `toAiSdk` returns to the SDK is the envelope's `data` (what the host's UI and
 * `onStepFinish` see); the envelope's `warnings` reach the model through the tool's
 * `toModelOutput`, which the SDK calls to build the tool result of the model's next request.
 * `ai` 6 and 7 pass it `{ toolCallId, input, output }`; `ai` 5 passes the output alone, so there
 * the warnings are found by the data object (a bare string or number result has no identity: its
 * warnings do not reach an `ai` 5 model).
 */
export interface SuccessWarnings {
  /** Remembers what a success returned to the SDK and its warnings (if any). */
  remember(success: { callId: string | undefined; data: unknown; warnings: readonly ToolWarning[] | undefined }): void;
  /**
   * The tool's `toModelOutput`: `{ type: 'json', value: { data, warnings } }` for a success with
   * warnings; otherwise what the SDK would send without a `toModelOutput` (a string as `text`,
   * anything else as `json`, `undefined` as `null`).
   */
  toModelOutput(options: unknown): AiSdkModelOutput;
}

function isObject(value: unknown): value is object {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}

/** The warnings of one `toAiSdk` call's successes, for the model. */
export function createSuccessWarnings(): SuccessWarnings {
  const byCallId = new Map<string, readonly ToolWarning[]>();
  const byData = new WeakMap<object, readonly ToolWarning[]>();
  /** Every object a tool returned: an `ai` 5 output, never `ai` 6/7's `{ toolCallId, input, output }`. */
  const returned = new WeakSet<object>();

  const sdkDefault = (output: unknown): AiSdkModelOutput =>
    typeof output === 'string' ? { type: 'text', value: output } : { type: 'json', value: output === undefined ? null : output };

  return {
    remember({ callId, data, warnings }) {
      if (isObject(data)) returned.add(data);
      if (warnings === undefined || warnings.length === 0) return;
      if (isObject(data)) byData.set(data, warnings);
      if (callId === undefined) return;
      byCallId.delete(callId);
      byCallId.set(callId, warnings);
      if (byCallId.size > REMEMBERED_SUCCESSES) byCallId.delete(byCallId.keys().next().value as string);
    },
    toModelOutput(options) {
      let output = options;
      let warnings: readonly ToolWarning[] | undefined;
      if (isObject(options) && !returned.has(options) && typeof (options as { toolCallId?: unknown }).toolCallId === 'string' && 'output' in options) {
        // ai 6 and 7: { toolCallId, input, output }
        const { toolCallId, output: value } = options as { toolCallId: string; output: unknown };
        output = value;
        warnings = byCallId.get(toolCallId) ?? (isObject(value) ? byData.get(value) : undefined);
      } else if (isObject(options)) {
        warnings = byData.get(options);
      }
      if (warnings === undefined) return sdkDefault(output);
      return { type: 'json', value: { data: output === undefined ? null : output, warnings } };
    },
  };
}
