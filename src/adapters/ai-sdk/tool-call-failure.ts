import type { ToolFailure } from '../../ground/tool-result.ts';
import { toolResultJson } from '../tool-result-json.ts';

const BRAND = Symbol.for('toolrun.ToolCallFailure');

/**
 * What a tool of `toAiSdk` throws when toolrun's call failed, so the AI SDK records a `tool-error`
 * (the host's UI, `onStepFinish` and telemetry see a failure) while the model reads toolrun's
 * envelope: the message (and `toString()`) is the failure envelope's JSON, which the SDK sends as
 * the tool result's `error-text`.
 *
 * `envelope` is the failure itself (`error.code`, `error.fields`, `error.suggestion`…); `code` is
 * its `error.code`. Recognise it with {@link ToolCallFailure.is} (its brand survives two copies of
 * toolrun) or by `name === 'ToolCallFailure'`.
 */
export class ToolCallFailure extends Error {
  readonly [BRAND] = true;
  /** The failure envelope toolrun returned for the call. */
  readonly envelope: ToolFailure;
  /** The envelope's `error.code`, e.g. `INVALID_ARGUMENTS`, `TOOL_NOT_FOUND`, `UNAVAILABLE`. */
  readonly code: ToolFailure['error']['code'];

  constructor(envelope: ToolFailure) {
    super(toolResultJson(envelope));
    this.name = 'ToolCallFailure';
    this.envelope = envelope;
    this.code = envelope.error.code;
  }

  /**
   * The envelope's JSON, like `message` (not `ToolCallFailure: …`): `ai` 7 sends a thrown error's
   * `toString()` to the model, `ai` 5 and 6 its `message`.
   */
  override toString(): string {
    return this.message;
  }

  /** True for any ToolCallFailure, even one from another copy of the package. Never throws. */
  static is(value: unknown): value is ToolCallFailure {
    if (typeof value !== 'object' || value === null) return false;
    try {
      return (value as Record<symbol, unknown>)[BRAND] === true;
    } catch {
      return false;
    }
  }
}
