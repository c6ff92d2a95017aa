/**
 * After each test file: what it replaced comes back. The files of a worker share one module graph (`isolate: false`),
 * so a spy, a stubbed variable or global, or fake timers left behind would reach the next file.
 */
import { afterAll, vi } from 'vitest';

afterAll(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  vi.useRealTimers();
});
