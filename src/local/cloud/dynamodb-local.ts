/**
 * DynamoDB Local (the official emulator, a Java program) for the local runtime and the integration
 * tests: fetched once into the user's cache, started in memory on a free port, and given the
 * tables of a synthesized CloudFormation template.
 *
 * Every `startDynamoDbLocal()` call starts its own emulator (its own port, its own in-memory data):
 * concurrent test files never share state or race on ports, at the price of ~2 s and ~200 MB each.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DynamoDBClient,
  ListTablesCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import * as z from 'zod';
import { DefinitionError, JavaNotFoundError, LocalServiceError } from '../../core/errors.ts';
import { cacheDir } from '../../core/paths.ts';
import { type CfnTemplate, localTableName } from './intrinsics.ts';

const run = promisify(execFile);

/**
 * The npm package that ships the official DynamoDB Local jar in its `emulator/` folder. Fetched
 * with `npm pack` rather than installed: we need the jar, not the package's 280 dependencies.
 */
export const DYNAMODB_LOCAL_PACKAGE = 'amplify-dynamodb-simulator';
export const DYNAMODB_LOCAL_PACKAGE_VERSION = '2.9.30';
/** Where the emulator is cached, one folder per package version: in the user's cache, shared by every project. */
export const DYNAMODB_LOCAL_CACHE_DIR = join(cacheDir(), 'dynamodb-local');

const JAR = 'DynamoDBLocal.jar';
const MIN_JAVA = 17;
/** Small heap and C1-only JIT: starts ~25% faster and stays light on shared 2-core machines. */
const DEFAULT_JVM_OPTIONS = ['-Xmx256m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];
/**
 * Runs java in the background and kills it when our end of the shell's stdin closes, which the
 * kernel does however this process ends (normal exit, crash, SIGKILL): no orphaned emulators.
 * The background subshell reads fd 3 because POSIX gives async lists /dev/null as stdin; it uses
 * only shell builtins, so it works with any `env`.
 */
const WATCHDOG =
  'exec 3<&0; "$0" "$@" </dev/null & pid=$!; (while read -r _; do :; done <&3; kill $pid 2>/dev/null) & wait $pid';

export interface DynamoDbLocalOptions {
  /** The emulator cache. @default DYNAMODB_LOCAL_CACHE_DIR */
  readonly cacheDir?: string;
  /** The port to listen on. @default a free port */
  readonly port?: number;
  /** How long to wait for the emulator to answer. @default 30_000 */
  readonly startTimeoutMs?: number;
  /**
   * The environment to find Java in (`JAVA_HOME`, else `java` on its `PATH`) and to run it with. @default process.env
   */
  readonly env?: NodeJS.ProcessEnv;
  /** JVM options before `-jar`. @default ['-Xmx256m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'] */
  readonly jvmOptions?: readonly string[];
  /**
   * Region of the returned client (any region sees the same tables: the emulator runs with -sharedDb).
   * @default 'us-east-1'
   */
  readonly region?: string;
}

/** A running emulator. Always call `stop()` (tests: in `afterAll`). */
export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`: set it as `AWS_ENDPOINT_URL_DYNAMODB` for handlers. */
  readonly endpoint: string;
  /** A client for the emulator, with dummy credentials. */
  readonly client: DynamoDBClient;
  /** Milliseconds from spawning Java (or connecting to a running emulator) to the first answered ListTables. */
  readonly startupMs: number;
  /**
   * Put before the name of every table this handle's user creates: '' for an emulator of its own, unique per
   * connection to a shared one (see `connectDynamoDbLocal`).
   */
  readonly tablePrefix: string;
  /** Kill the emulator (its data is gone), or for a shared one drop this connection's tables; close the client. Idempotent. */
  stop(): Promise<void>;
}

/** The Java executable: `$JAVA_HOME/bin/java` when JAVA_HOME is set, else `java` on the PATH. */
function javaCommand(env: NodeJS.ProcessEnv): string {
  return env.JAVA_HOME ? join(env.JAVA_HOME, 'bin', 'java') : 'java';
}

function javaHelp(found: string): string {
  // One line: the CLI prints only the first line of an error.
  return (
    `DynamoDB Local needs Java ${MIN_JAVA} or newer (${found}): install it with ` +
    `"sudo apt-get install -y openjdk-17-jre-headless" (macOS: "brew install openjdk@17"), ` +
    `or set JAVA_HOME to a Java ${MIN_JAVA}+ installation.`
  );
}

/** Parse the major version from `java -version` output (`"17.0.15"` → 17, `"1.8.0_402"` → 8). */
export function parseJavaMajorVersion(versionOutput: string): number | undefined {
  const m = /version "(\d+)(?:\.(\d+))?/.exec(versionOutput);
  if (!m) return undefined;
  const first = Number(m[1]);
  return first === 1 && m[2] !== undefined ? Number(m[2]) : first;
}

/**
 * Find Java >= 17.
 * @throws JavaNotFoundError with install instructions when Java is missing or too old.
 */
export async function findJava(env: NodeJS.ProcessEnv = process.env): Promise<{ java: string; majorVersion: number }> {
  const java = javaCommand(env);
  let output: string;
  try {
    const { stdout, stderr } = await run(java, ['-version'], { env });
    output = stderr + stdout; // java prints its version on stderr
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new JavaNotFoundError(
      javaHelp(code === 'ENOENT' ? `no "${java}" found` : `"${java} -version" failed: ${(e as Error).message}`),
    );
  }
  const majorVersion = parseJavaMajorVersion(output);
  if (majorVersion === undefined || majorVersion < MIN_JAVA)
    throw new JavaNotFoundError(
      javaHelp(`found ${majorVersion === undefined ? 'an unknown version' : `Java ${majorVersion}`} at "${java}"`),
    );
  return { java, majorVersion };
}

/**
 * Make sure the emulator is in the cache, fetching it on first use (`npm pack`, ~55 MB, then only
 * `package/emulator/` is extracted). Safe when several processes fetch at once: each extracts into
 * its own staging folder and the first atomic rename wins.
 * @returns the folder holding DynamoDBLocal.jar and DynamoDBLocal_lib/.
 */
export async function ensureDynamoDbLocal(cacheDir: string = DYNAMODB_LOCAL_CACHE_DIR): Promise<string> {
  const dir = join(cacheDir, DYNAMODB_LOCAL_PACKAGE_VERSION);
  if (existsSync(join(dir, JAR))) return dir;
  await mkdir(cacheDir, { recursive: true });
  const staging = await mkdtemp(join(cacheDir, '.fetch-'));
  try {
    const spec = `${DYNAMODB_LOCAL_PACKAGE}@${DYNAMODB_LOCAL_PACKAGE_VERSION}`;
    try {
      await run('npm', ['pack', spec, '--pack-destination', staging, '--silent'], {
        cwd: staging,
        maxBuffer: 16 * 1024 * 1024,
      });
      const tarball = (await readdir(staging)).find((f) => f.endsWith('.tgz'));
      if (!tarball) throw new Error(`npm pack ${spec} produced no tarball`);
      await run('tar', ['-xzf', join(staging, tarball), '-C', staging, 'package/emulator']);
    } catch (e) {
      throw new LocalServiceError(
        `could not fetch DynamoDB Local (${spec}) from the npm registry: ${(e as Error).message}`,
        { cause: e },
      );
    }
    try {
      await rename(join(staging, 'package', 'emulator'), dir);
    } catch (e) {
      // Another process finished first: its copy is complete, use it.
      if (!existsSync(join(dir, JAR))) throw e;
    }
    return dir;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** A port nobody listens on right now (the OS picks it). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Spawned {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  output(): string;
}

function spawnEmulator(
  java: string,
  dir: string,
  port: number,
  jvmOptions: readonly string[],
  env: NodeJS.ProcessEnv,
): Spawned {
  const args = [
    ...jvmOptions,
    `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
    '-jar',
    join(dir, JAR),
    '-inMemory',
    '-sharedDb',
    '-port',
    String(port),
  ];
  // detached: its own process group, so stop() can force-kill the shell, java and the watchdog together.
  const child = spawn('/bin/sh', ['-c', WATCHDOG, java, ...args], {
    cwd: dir,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  child.stdin!.on('error', () => {}); // EPIPE when the shell is already gone
  // A forgotten emulator must not keep Node alive: once Node exits, the watchdog ends Java.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as Socket).unref();
  const exited = new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(null));
    child.on('exit', (code) => resolve(code));
  });
  return { child, exited, output: () => log };
}

/** Resolves once anything answers HTTP on the endpoint; rejects if the emulator exits or the time runs out. */
async function waitUntilListening(endpoint: string, spawned: Spawned, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void spawned.exited.then(() => (exited = true));
  while (!exited) {
    try {
      await fetch(endpoint, { method: 'POST', signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      if (Date.now() > deadline)
        throw new LocalServiceError(
          `DynamoDB Local did not answer on ${endpoint} within ${timeoutMs} ms:\n${spawned.output()}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new LocalServiceError(`DynamoDB Local exited before answering on ${endpoint}:\n${spawned.output()}`);
}

async function stopEmulator({ child, exited }: Spawned): Promise<void> {
  child.ref(); // keep Node alive until the emulator is really gone
  child.stdin!.end(); // the watchdog kills java, then the shell exits
  const forced = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }, 5000);
  await exited;
  clearTimeout(forced);
}

/**
 * Start DynamoDB Local in memory on a free port (fetching it first if needed) and wait until it
 * answers ListTables. Takes ~2 s on a warm cache.
 * @throws JavaNotFoundError when Java 17+ is missing; LocalServiceError when it cannot be fetched or started.
 * @example
 * const ddb = await startDynamoDbLocal();
 * try {
 *   await createTablesFromTemplate(ddb.client, template);
 * } finally {
 *   await ddb.stop();
 * }
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const env = options.env ?? process.env;
  const { java } = await findJava(env);
  const dir = await ensureDynamoDbLocal(options.cacheDir);
  const jvmOptions = options.jvmOptions ?? DEFAULT_JVM_OPTIONS;
  const timeoutMs = options.startTimeoutMs ?? 30_000;
  // A port picked free can be taken before Java binds it: try again with another one.
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    const endpoint = `http://127.0.0.1:${port}`;
    const started = Date.now();
    const spawned = spawnEmulator(java, dir, port, jvmOptions, env);
    const client = new DynamoDBClient({
      endpoint,
      region: options.region ?? 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      await waitUntilListening(endpoint, spawned, timeoutMs);
      await client.send(new ListTablesCommand({ Limit: 1 }));
    } catch (e) {
      client.destroy();
      await stopEmulator(spawned);
      if (options.port === undefined && attempt < 3 && /BindException|Address already in use/.test(spawned.output()))
        continue;
      throw e;
    }
    const startupMs = Date.now() - started;
    let stopping: Promise<void> | undefined;
    return {
      endpoint,
      client,
      startupMs,
      tablePrefix: '',
      stop: () =>
        (stopping ??= (async () => {
          client.destroy();
          await stopEmulator(spawned);
        })()),
    };
  }
}

const KeySchema = z
  .array(z.object({ AttributeName: z.string(), KeyType: z.enum(['HASH', 'RANGE']) }))
  .min(1)
  .max(2);
const Projection = z.object({
  ProjectionType: z.enum(['ALL', 'KEYS_ONLY', 'INCLUDE']).optional(),
  NonKeyAttributes: z.array(z.string()).optional(),
});
const Index = z.object({ IndexName: z.string(), KeySchema, Projection });
/**
 * The properties shared by AWS::DynamoDB::Table and AWS::DynamoDB::GlobalTable (CDK's TableV2) that shape a local
 * table.
 */
const TableProperties = z.object({
  KeySchema,
  AttributeDefinitions: z.array(z.object({ AttributeName: z.string(), AttributeType: z.enum(['S', 'N', 'B']) })).min(1),
  GlobalSecondaryIndexes: z.array(Index).optional(),
  LocalSecondaryIndexes: z.array(Index).optional(),
  StreamSpecification: z
    .object({ StreamViewType: z.enum(['KEYS_ONLY', 'NEW_IMAGE', 'OLD_IMAGE', 'NEW_AND_OLD_IMAGES']) })
    .optional(),
  TimeToLiveSpecification: z.object({ AttributeName: z.string().optional(), Enabled: z.boolean() }).optional(),
});

const TABLE_TYPES = new Set(['AWS::DynamoDB::Table', 'AWS::DynamoDB::GlobalTable']);

/**
 * Create every DynamoDB table of a synthesized template (`AWS::DynamoDB::Table` and
 * `AWS::DynamoDB::GlobalTable`): keys, attribute definitions, GSIs, LSIs, streams and TTL, all
 * PAY_PER_REQUEST, named by {@link localTableName} after `tablePrefix`.
 * @returns logical id → local table name.
 * @throws DefinitionError naming the resource and property when a table definition is invalid.
 */
export async function createTablesFromTemplate(
  client: DynamoDBClient,
  template: CfnTemplate,
  tablePrefix = '',
): Promise<Record<string, string>> {
  const tables = Object.entries(template.Resources ?? {}).filter(([, r]) => TABLE_TYPES.has(r.Type));
  const names: Record<string, string> = {};
  await Promise.all(
    tables.map(async ([logicalId, resource]) => {
      const parsed = TableProperties.safeParse(resource.Properties ?? {});
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new DefinitionError(
          'template',
          `Resources.${logicalId}.Properties.${issue.path.join('.')}`,
          issue.message,
        );
      }
      const p = parsed.data;
      const TableName = localTableName(logicalId, resource, tablePrefix);
      const input: CreateTableCommandInput = {
        TableName,
        KeySchema: p.KeySchema,
        AttributeDefinitions: p.AttributeDefinitions,
        BillingMode: 'PAY_PER_REQUEST',
        GlobalSecondaryIndexes: p.GlobalSecondaryIndexes,
        LocalSecondaryIndexes: p.LocalSecondaryIndexes,
        StreamSpecification: p.StreamSpecification && {
          StreamEnabled: true,
          StreamViewType: p.StreamSpecification.StreamViewType,
        },
      };
      await client.send(new CreateTableCommand(input));
      const ttl = p.TimeToLiveSpecification;
      if (ttl?.Enabled && ttl.AttributeName)
        await client.send(
          new UpdateTimeToLiveCommand({
            TableName,
            TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true },
          }),
        );
      names[logicalId] = TableName;
    }),
  );
  return names;
}
