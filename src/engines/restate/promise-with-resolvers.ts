/**
 * The Restate SDK calls `Promise.withResolvers` (ES2024: Node 22 and later). On Node 20, which
 * toolrun supports, it is missing: this installs the standard definition, and only then, so the
 * SDK runs on every Node toolrun runs on. Nothing changes where the platform has it.
 *
 * @see ECMAScript 2024, 27.2.4.8 Promise.withResolvers
 */
export function ensurePromiseWithResolvers(): void {
  const constructor = Promise as unknown as { withResolvers?: unknown };
  if (typeof constructor.withResolvers === 'function') return;
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>() {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new Promise<T>((settle, fail) => {
        resolve = settle;
        reject = fail;
      });
      return { promise, resolve, reject };
    },
  });
}
