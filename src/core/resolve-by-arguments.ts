/**
 * The tool a call's arguments point to when its name says nothing (`func1`, `""`, `print`): each
 * argument's name and JSON type compared with each offered tool's parameters. Only ever a
 * suggestion, and only when exactly one tool fits clearly.
 */

/** A tool as {@link suggestByArguments} compares it: its parameters (compact name → declared JSON types, empty when any). */
export interface ArgumentShape {
  name: string;
  /** Compact parameter name (lowercase letters and digits) → the JSON Schema types it accepts (empty: any). */
  parameters: ReadonlyMap<string, readonly string[]>;
  /** The parameters' names as declared, by compact name (for the message). */
  declaredNames: ReadonlyMap<string, string>;
  /** Compact names of the required parameters. */
  required: readonly string[];
}

/** A suggestion from the arguments: the tool, and a phrase saying why (`its parameters fit the arguments "a", "b"`). */
export interface ArgumentSuggestion {
  closest?: string;
  /** The tools that fit, best first (several on a tie, when nothing is suggested). */
  candidates: string[];
  reason?: string;
}

/** Lowercase letters and digits only (`Return_Type` → `returntype`). */
export function compactName(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/**
 * Whether a value may stand for a parameter of JSON Schema types `types` (empty: any). Lenient as
 * validation's coercion is: a numeric string fits a number, `"true"` a boolean, a non-array value
 * an array (one item).
 */
function fitsTypes(value: unknown, types: readonly string[]): boolean {
  if (types.length === 0) return true;
  return types.some((type) => {
    switch (type) {
      case 'string':
        return typeof value === 'string';
      case 'integer':
        return (typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value));
      case 'number':
        return typeof value === 'number' || (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)));
      case 'boolean':
        return typeof value === 'boolean' || value === 'true' || value === 'false';
      case 'array':
        return value !== null && value !== undefined;
      case 'object':
        return typeof value === 'object' && value !== null && !Array.isArray(value);
      case 'null':
        return value === null;
      default:
        return true;
    }
  });
}

interface Fit {
  shape: ArgumentShape;
  /** Every argument is a parameter of the tool, of an accepted type. */
  takesAll: boolean;
  /** Every required parameter is among the arguments. */
  requiredPresent: boolean;
}

/**
 * Compares a call's arguments with each tool: a tool fits when it declares every argument (by
 * name, ignoring case and separators) with a type the value may have. The suggestion is the one
 * tool that fits and has all its required parameters present, or else the one tool that fits at
 * all; when two or more tools fit equally, nothing is suggested (they are listed as candidates).
 * Tools of unknown parameters never fit. No arguments: no suggestion.
 */
export function suggestByArguments(args: Readonly<Record<string, unknown>>, shapes: readonly ArgumentShape[]): ArgumentSuggestion {
  const keys = Object.keys(args);
  if (keys.length === 0) return { candidates: [] };
  const fits: Fit[] = [];
  for (const shape of shapes) {
    let takesAll = true;
    const present = new Set<string>();
    for (const key of keys) {
      const compact = compactName(key);
      const types = shape.parameters.get(compact);
      if (types === undefined || !fitsTypes(args[key], types)) {
        takesAll = false;
        break;
      }
      present.add(compact);
    }
    if (!takesAll) continue;
    fits.push({ shape, takesAll, requiredPresent: shape.required.every((name) => present.has(name)) });
  }
  const complete = fits.filter((fit) => fit.requiredPresent);
  const best = complete.length > 0 ? complete : fits;
  const candidates = [...best, ...fits.filter((fit) => !best.includes(fit))].slice(0, 3).map((fit) => fit.shape.name);
  if (best.length !== 1) return { candidates };
  const chosen = best[0]!.shape;
  const shown = keys.slice(0, 3).map((key) => JSON.stringify(chosen.declaredNames.get(compactName(key)) ?? key));
  return { closest: chosen.name, candidates, reason: `its parameters fit the arguments: ${shown.join(', ')}${keys.length > 3 ? ', …' : ''}` };
}

/** Names models put for a tool they cannot name: `func1`, `function_2`, `tool`, `fn`, `""`. */
const PLACEHOLDER_NAME = /^(?:func|function|fn|f|tool|call|action|api|method)?[\s_-]?\d*$/i;

/** Whether `name` is a placeholder that names no tool (its spelling must not drive a suggestion). */
export function isPlaceholderName(name: string): boolean {
  return PLACEHOLDER_NAME.test(name.trim());
}

/** The tool a nested call names, and where it was found. */
export interface NestedCall {
  /** The offered tool the request or its arguments call. */
  tool: string;
  /** `outer`: the request is `tool(… other(…) …)`; `inner`: an argument holds a call of `tool`. */
  where: 'outer' | 'inner';
}

const CALL_TEXT = /^\s*([\p{L}_][\p{L}\p{N}_.:/-]*)\s*\(/u;

/**
 * A call written inside another: a requested name that is call text (`calculate_derivative(function=
 * calculate_derivative(…))`) whose outer name is an offered tool, or arguments that hold a call
 * object (`{ "name": "t", "arguments": {…} }`, `{ "t": {…} }`) of an offered tool. `isOffered`
 * maps a name to the offered tool's name (an equivalent spelling accepted), or `undefined`.
 * Reads at most 3 levels and 64 values of the arguments.
 */
export function findNestedCall(requested: string, args: unknown, isOffered: (name: string) => string | undefined): NestedCall | undefined {
  const outer = CALL_TEXT.exec(requested);
  if (outer !== null) {
    const tool = isOffered(outer[1]!);
    if (tool !== undefined) return { tool, where: 'outer' };
  }
  let budget = 64;
  const visit = (value: unknown, depth: number): string | undefined => {
    if (budget <= 0 || depth > 3 || typeof value !== 'object' || value === null) return undefined;
    budget -= 1;
    if (Array.isArray(value)) {
      for (const item of value.slice(0, 16)) {
        const found = visit(item, depth + 1);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (typeof record.name === 'string' && keys.some((key) => key === 'arguments' || key === 'parameters' || key === 'args')) {
      const tool = isOffered(record.name);
      if (tool !== undefined) return tool;
    }
    if (keys.length === 1 && typeof record[keys[0]!] === 'object' && record[keys[0]!] !== null) {
      const tool = isOffered(keys[0]!);
      if (tool !== undefined) return tool;
    }
    for (const key of keys.slice(0, 16)) {
      const found = visit(record[key], depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  const inner = depthZero(args, visit);
  return inner === undefined ? undefined : { tool: inner, where: 'inner' };
}

/** Visits the values of the top-level arguments (not the arguments object itself, which is no call). */
function depthZero(args: unknown, visit: (value: unknown, depth: number) => string | undefined): string | undefined {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
  for (const value of Object.values(args).slice(0, 16)) {
    const found = visit(value, 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
