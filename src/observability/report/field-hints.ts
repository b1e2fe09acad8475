/**
 * The hint `toolrun report` gives for a field whose errors dominate: how to change the field's
 * description (or schema) so the model stops getting it wrong, by the field's commonest problem.
 */

/** What the hint is built from. `received` are redacted samples of what the model sent. */
export interface FieldHintInput {
  /** The field's name (last JSON Pointer token). */
  field: string;
  problem: string;
  expected: string | undefined;
  received: readonly string[];
}

/** One sentence telling the developer how to fix the field's description. */
export function describeFieldHint(input: FieldHintInput): string {
  const { field, problem } = input;
  const expected = input.expected !== undefined ? ` (${input.expected})` : '';
  const sent = input.received.length > 0 ? `; the model sent ${input.received.join(', ')}` : '';
  switch (problem) {
    case 'range':
      return `State the scale of "${field}" in its description${expected} and what each end means, e.g. "1 = lowest … 5 = highest"${sent}.`;
    case 'enum':
    case 'const':
      return `List the exact allowed values of "${field}"${expected} in its description, with what each one means${sent}.`;
    case 'format':
    case 'pattern':
      return `Give the exact format of "${field}" with an example${expected} in its description${sent}.`;
    case 'type':
      return `Say which JSON type "${field}" takes${expected}, e.g. "an integer, not a word or a string"${sent}.`;
    case 'required':
      return `Say in the description that "${field}" is required and where its value comes from (which tool returns it, or ask the user).`;
    case 'unknown':
      return `The model sends "${field}", which the schema does not have${expected}: rename the parameter it means, or mention the right name in the tool description.`;
    case 'length':
      return `State the length limits of "${field}"${expected} in its description${sent}.`;
    case 'syntax':
      return `The model's arguments were not valid JSON: keep the schema of this tool small and flat, and mention that values must be JSON.`;
    default:
      return `Clarify the description of "${field}"${expected}${sent}.`;
  }
}
