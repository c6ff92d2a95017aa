/**
 * The warm local service: one DynamoDB Local that outlives a command, so the second `stepwise run` does not wait on
 * a JVM. A small supervisor process (`local-service-main`) owns the emulator, writes `service.json` once it answers,
 * and stops it after an idle time with no command using it. Commands hold a lease (a file naming the supervisor)
 * while they use it; the supervisor never stops under a live lease. Sessions on it name their tables with a prefix
 * of their own (`connectDynamoDbLocal`), so two commands at once never mix data; what must outlive the service
 * (histories, pauses) is on disk under `.stepwise/`, as without it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { LocalServiceError } from '../../core/errors.ts';
import { cacheDir, ENGINE_MODULE_EXTENSION, engineModule } from '../../core/paths.ts';
import { DYNAMODB_LOCAL_PACKAGE_VERSION, findJava } from './dynamodb-local.ts';

/** Where the service keeps its state: `STEPWISE_LOCAL_SERVICE_DIR`, else the user's cache (one per emulator version). */
export function localServiceDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.STEPWISE_LOCAL_SERVICE_DIR ?? join(cacheDir(), 'local-service', DYNAMODB_LOCAL_PACKAGE_VERSION);
}

/** Minutes without a command before the service stops: `STEPWISE_LOCAL_IDLE_MINUTES`, else 15. */
export function idleMinutes(env: NodeJS.ProcessEnv = process.env): number {
  const minutes = Number(env.STEPWISE_LOCAL_IDLE_MINUTES);
  return Number.isFinite(minutes) && minutes > 0 ? minutes : 15;
}

export const ServiceInfoSchema = z.object({
  pid: z.number().int().positive(),
  endpoint: z.string().url(),
  startedAt: z.string(),
  idleMinutes: z.number().positive(),
});
export type ServiceInfo = z.infer<typeof ServiceInfoSchema>;

export const SERVICE_FILE = 'service.json';
export const ERROR_FILE = 'service.error';
export const LEASES_DIR = 'leases';
export const LAST_USED_FILE = 'last-used';
const LOCK_DIR = 'start.lock';
/** A start lock older than this was left by a command that died while starting the service. */
const STALE_LOCK_MS = 90_000;
const START_TIMEOUT_MS = 60_000;

/**
 * Whether this process's sessions use the warm service: `STEPWISE_LOCAL_SERVICE=on`, which the CLI sets unless it
 * is `off` already. Code that starts sessions itself (a test suite) gets an emulator of its own by default.
 */
export const localServiceEnabled = (env: NodeJS.ProcessEnv = process.env): boolean =>
  env.STEPWISE_LOCAL_SERVICE === 'on';

/** Whether process `pid` exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The service as its file describes it, or undefined when there is none (or a half-written one). */
export function readServiceInfo(dir: string = localServiceDir()): ServiceInfo | undefined {
  try {
    const parsed = ServiceInfoSchema.safeParse(JSON.parse(readFileSync(join(dir, SERVICE_FILE), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the service of `info` runs and its emulator answers. */
export async function answers(info: ServiceInfo): Promise<boolean> {
  if (!isAlive(info.pid)) return false;
  try {
    const res = await fetch(info.endpoint, { method: 'POST', signal: AbortSignal.timeout(2000) });
    return res.status > 0;
  } catch {
    return false;
  }
}

/** The leases of live commands on the supervisor `pid`; leases of commands that died are removed. */
export function liveLeases(dir: string, pid: number): string[] {
  const leases = join(dir, LEASES_DIR);
  let names: string[];
  try {
    names = readdirSync(leases);
  } catch {
    return [];
  }
  return names.filter((name) => {
    const [holder, supervisor] = name.split('-').map(Number);
    if (supervisor !== pid) return false;
    if (isAlive(holder!)) return true;
    rmSync(join(leases, name), { force: true });
    return false;
  });
}

export interface ServiceLease {
  readonly endpoint: string;
  /** Give the lease back (idempotent); the service's idle time starts again. */
  release(): void;
}

/**
 * A lease on the running service, starting it first when it is not up (or found dead). Safe for several
 * commands at once: one starts it, the others wait for it.
 * @throws JavaNotFoundError when Java 17+ is missing; LocalServiceError when the service cannot start.
 */
export async function useLocalService(dir: string = localServiceDir()): Promise<ServiceLease> {
  mkdirSync(join(dir, LEASES_DIR), { recursive: true });
  for (let attempt = 0; attempt < 5; attempt++) {
    const info = await runningService(dir);
    const lease = join(dir, LEASES_DIR, `${process.pid}-${info.pid}-${randomBytes(4).toString('hex')}`);
    writeFileSync(lease, '');
    // The supervisor removes its file before it stops: still there now means it waits for this lease.
    if (readServiceInfo(dir)?.pid !== info.pid) {
      rmSync(lease, { force: true });
      continue;
    }
    let released = false;
    return {
      endpoint: info.endpoint,
      release: () => {
        if (released) return;
        released = true;
        rmSync(lease, { force: true });
        writeFileSync(join(dir, LAST_USED_FILE), new Date().toISOString());
      },
    };
  }
  throw new LocalServiceError(`the local service in ${dir} keeps stopping: see ${join(dir, 'service.log')}`);
}

/** The service that answers now, started when there is none. */
async function runningService(dir: string): Promise<ServiceInfo> {
  const info = readServiceInfo(dir);
  if (info && (await answers(info))) return info;
  return withStartLock(dir, async () => {
    const again = readServiceInfo(dir);
    if (again && (await answers(again))) return again;
    if (again && isAlive(again.pid)) process.kill(again.pid, 'SIGTERM');
    rmSync(join(dir, SERVICE_FILE), { force: true });
    return startService(dir);
  });
}

/** Run `fn` holding the start lock (a directory: creating it is atomic); waits for another holder. */
async function withStartLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lock = join(dir, LOCK_DIR);
  const deadline = Date.now() + START_TIMEOUT_MS + STALE_LOCK_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const age = Date.now() - (statMs(lock) ?? Date.now());
      if (age > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new LocalServiceError(`the local service's start lock ${lock} is held`);
      else await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

const statMs = (path: string): number | undefined => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
};

/** Spawn the supervisor, detached, and wait until it reports its emulator up (or why it could not). */
async function startService(dir: string): Promise<ServiceInfo> {
  await findJava(); // the usual one-line install hint, in this process
  rmSync(join(dir, ERROR_FILE), { force: true });
  const log = openSync(join(dir, 'service.log'), 'a');
  const main = engineModule('local/cloud/local-service-main');
  const args = ENGINE_MODULE_EXTENSION === '.ts' ? ['--import', 'tsx', main] : [main];
  const child = spawn(process.execPath, [...args, dir, String(idleMinutes())], {
    detached: true,
    stdio: ['ignore', log, log],
    env: process.env,
  });
  closeSync(log);
  child.unref();
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const info = readServiceInfo(dir);
    if (info && info.pid === child.pid) return info;
    const error = readText(join(dir, ERROR_FILE));
    if (error) throw new LocalServiceError(`the local service did not start: ${error}`);
    if (child.exitCode !== null || !isAlive(child.pid!))
      throw new LocalServiceError(`the local service exited at start: see ${join(dir, 'service.log')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new LocalServiceError(`the local service did not answer within ${START_TIMEOUT_MS / 1000} s`);
}

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
};

export interface ServiceStatus {
  readonly running: boolean;
  readonly dir: string;
  readonly pid?: number;
  readonly endpoint?: string;
  readonly startedAt?: string;
  readonly idleMinutes?: number;
  /** Commands using it now. */
  readonly leases?: number;
}

/** What runs now, for `stepwise local status`. */
export async function serviceStatus(dir: string = localServiceDir()): Promise<ServiceStatus> {
  const info = readServiceInfo(dir);
  if (!info || !(await answers(info))) return { running: false, dir };
  return { running: true, dir, ...info, leases: liveLeases(dir, info.pid).length };
}

/** Start the service unless it runs (`stepwise local start`). */
export async function startLocalService(dir: string = localServiceDir()): Promise<ServiceStatus> {
  mkdirSync(join(dir, LEASES_DIR), { recursive: true });
  await runningService(dir);
  return serviceStatus(dir);
}

/** Stop the service and wait until it is gone (`stepwise local stop`); false when none ran. */
export async function stopLocalService(dir: string = localServiceDir()): Promise<boolean> {
  const info = readServiceInfo(dir);
  if (!info || !isAlive(info.pid)) {
    rmSync(join(dir, SERVICE_FILE), { force: true });
    return false;
  }
  process.kill(info.pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (isAlive(info.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (isAlive(info.pid)) process.kill(info.pid, 'SIGKILL');
  return true;
}
