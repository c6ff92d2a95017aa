/**
 * A value built on first use: a handler must not fail at import when its environment is incomplete, and a module
 * that only some calls need (an SDK client) is loaded by the call that needs it.
 */
export function lazy<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}
