/**
 * Checks of a JSON Schema's shape that no validator makes before it compiles: an object graph that
 * refers to itself (a schema must recurse with `$ref`; a cycle of objects is not JSON, and a
 * compiler walking it overflows its stack), and a `format` that is not a string or is a misspelt
 * known one (`dat` for `date` would otherwise check nothing). Each walk is iterative and bounded.
 */

/** Objects and arrays visited at most; a larger schema is left to the compiler. */
const MAX_NODES = 100_000;

/**
 * Formats that annotate rather than check, from the OpenAPI Specification (`int32`, `int64`,
 * `float`, `double`, `byte`, `binary`, `password`): common in tool schemas generated from an API
 * description, accepted as they are.
 */
export const ANNOTATION_FORMATS: ReadonlySet<string> = new Set(['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password']);

/**
 * The formats the JSON Schema specification defines (2020-12 and draft-07): a validator may leave
 * some unchecked (Ajv has no `idn-email`, `idn-hostname`, `iri`, `iri-reference`), but none is a
 * mistake.
 */
export const SPECIFICATION_FORMATS: ReadonlySet<string> = new Set([
  'date-time',
  'date',
  'time',
  'duration',
  'email',
  'idn-email',
  'hostname',
  'idn-hostname',
  'ipv4',
  'ipv6',
  'uri',
  'uri-reference',
  'iri',
  'iri-reference',
  'uuid',
  'uri-template',
  'json-pointer',
  'relative-json-pointer',
  'regex',
]);

/** Where `schema` refers to itself, as a JSON Pointer to the object that closes the cycle; `undefined` when it does not. */
export function findSchemaCycle(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const onPath = new Set<object>();
  // depth-first, iterative: an entry is entered (pushed on the path), then left once its children are done
  const stack: { node: object; pointer: string; leave: boolean }[] = [{ node: schema, pointer: '', leave: false }];
  let visited = 0;
  while (stack.length > 0) {
    const entry = stack.pop()!;
    if (entry.leave) {
      onPath.delete(entry.node);
      continue;
    }
    if (onPath.has(entry.node)) return entry.pointer === '' ? '/' : entry.pointer;
    if (++visited > MAX_NODES) return undefined;
    onPath.add(entry.node);
    stack.push({ ...entry, leave: true });
    for (const [key, child] of Object.entries(entry.node)) {
      if (typeof child === 'object' && child !== null)
        stack.push({ node: child, pointer: `${entry.pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`, leave: false });
    }
  }
  return undefined;
}

/** Keywords whose value is one subschema. */
const SCHEMA_KEYWORDS = [
  'items',
  'additionalItems',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
];
/** Keywords whose value is an array of subschemas. */
const SCHEMA_ARRAY_KEYWORDS = ['items', 'prefixItems', 'allOf', 'anyOf', 'oneOf'];
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

/**
 * The first `format` of `schema` that is not a string or that `isKnown` does not know, with where
 * it is (a JSON Pointer); `undefined` when every one is known. Reads schema keywords only (a
 * property named `format` is not a format). Call it on an acyclic schema.
 */
export function findUnknownFormat(schema: unknown, isKnown: (name: string) => boolean): { pointer: string; format: unknown } | undefined {
  const stack: { node: unknown; pointer: string }[] = [{ node: schema, pointer: '' }];
  let visited = 0;
  while (stack.length > 0 && ++visited <= MAX_NODES) {
    const { node, pointer } = stack.pop()!;
    if (typeof node !== 'object' || node === null || Array.isArray(node)) continue;
    const record = node as Record<string, unknown>;
    if ('format' in record && (typeof record.format !== 'string' || !isKnown(record.format))) return { pointer: `${pointer}/format`, format: record.format };
    for (const keyword of SCHEMA_KEYWORDS) if (keyword in record) stack.push({ node: record[keyword], pointer: `${pointer}/${keyword}` });
    for (const keyword of SCHEMA_ARRAY_KEYWORDS) {
      const list = record[keyword];
      if (Array.isArray(list)) list.forEach((item, index) => stack.push({ node: item, pointer: `${pointer}/${keyword}/${index}` }));
    }
    for (const keyword of SCHEMA_MAP_KEYWORDS) {
      const map = record[keyword];
      if (typeof map === 'object' && map !== null && !Array.isArray(map)) {
        for (const [name, child] of Object.entries(map))
          stack.push({ node: child, pointer: `${pointer}/${keyword}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}` });
      }
    }
  }
  return undefined;
}
