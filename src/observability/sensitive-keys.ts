/**
 * Combines a tool's `sensitive` keys with keys redacted for every tool, returning the same array
 * object for the same tool list, so the redactor compiles each combination once.
 */
export function createSensitiveKeyCombiner(globalKeys: readonly string[] = []): (toolKeys: readonly string[]) => readonly string[] {
  if (globalKeys.length === 0) return (toolKeys) => toolKeys;
  const combined = new WeakMap<readonly string[], readonly string[]>();
  return (toolKeys) => {
    let keys = combined.get(toolKeys);
    if (keys === undefined) {
      keys = [...toolKeys, ...globalKeys];
      combined.set(toolKeys, keys);
    }
    return keys;
  };
}
