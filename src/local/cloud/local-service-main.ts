/**
 * The warm local service's supervisor (started detached by `local-service.ts`): runs DynamoDB Local, writes
 * `service.json` once it answers, and stops after `idleMinutes` with no lease, or on SIGTERM. The emulator dies
 * with this process whatever ends it (the emulator's watchdog).
 * Arguments: the service folder, the idle minutes.
 */
import { existsSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local.ts';
import {
  ERROR_FILE,
  LAST_USED_FILE,
  liveLeases,
  readServiceInfo,
  SERVICE_FILE,
  type ServiceInfo,
} from './local-service.ts';

const [dir = '.', minutesText = '15'] = process.argv.slice(2);
const idleMs = Number(minutesText) * 60_000;
const CHECK_MS = Math.min(5_000, Math.max(200, idleMs / 4));

let ddb: DynamoDbLocal;
try {
  // A shared emulator serves several commands at once: a larger heap than a session's own.
  ddb = await startDynamoDbLocal({ jvmOptions: ['-Xmx512m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'] });
} catch (e) {
  writeFileSync(join(dir, ERROR_FILE), (e as Error).message.split('\n')[0]!);
  process.exit(1);
}

const info: ServiceInfo = {
  pid: process.pid,
  endpoint: ddb.endpoint,
  startedAt: new Date().toISOString(),
  idleMinutes: Number(minutesText),
};
const staging = join(dir, `${SERVICE_FILE}.${process.pid}`);
writeFileSync(staging, JSON.stringify(info, null, 2));
renameSync(staging, join(dir, SERVICE_FILE));
writeFileSync(join(dir, LAST_USED_FILE), info.startedAt);

let stopping = false;
/** Withdraw the service file first (new commands start another service), then wait out the leases held now. */
async function stop(leaseWaitMs: number): Promise<never> {
  stopping = true;
  if (readServiceInfo(dir)?.pid === process.pid) rmSync(join(dir, SERVICE_FILE), { force: true });
  const deadline = Date.now() + leaseWaitMs;
  while (Date.now() < deadline && liveLeases(dir, process.pid).length > 0) await new Promise((r) => setTimeout(r, 200));
  await ddb.stop();
  process.exit(0);
}

const lastUsedMs = (): number => {
  const path = join(dir, LAST_USED_FILE);
  return existsSync(path) ? statSync(path).mtimeMs : Date.parse(info.startedAt);
};

// Asked to stop: the commands using it get a few seconds to finish.
process.on('SIGTERM', () => void stop(8_000));
process.on('SIGINT', () => void stop(8_000));
setInterval(() => {
  if (stopping) return;
  // Another supervisor replaced this one (after this one was taken for dead): leave it the field.
  if (readServiceInfo(dir)?.pid !== process.pid) return void stop(Number.POSITIVE_INFINITY);
  if (liveLeases(dir, process.pid).length === 0 && Date.now() - lastUsedMs() > idleMs)
    void stop(Number.POSITIVE_INFINITY);
}, CHECK_MS);
