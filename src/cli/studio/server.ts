/**
 * The Studio server: `node:http` on 127.0.0.1 only, serving the bundled UI and a JSON API over the
 * project's records (executions, pauses, imports, eval runs) and compiled definitions, plus a
 * server-sent event stream that says when a record changed (the live view).
 *
 * Safety:
 * - Only the loopback interface, and only requests whose `Host` is `127.0.0.1:<port>` or
 *   `localhost:<port>` (a DNS-rebound name is refused).
 * - Every change (run, fork, resume, import) is a `POST` with a JSON body that carries the
 *   per-process token of the page in `X-Stepwise-Token`, from an allowed `Origin` when the browser
 *   sends one: a cross-site page can neither read the token nor send that header without a CORS
 *   preflight, which this server never allows.
 * - Names in URLs are record names (no separators, no `..`), looked up in the state folders, and
 *   only regular files are read there (a symlink or a FIFO is refused, found with `lstat`), without
 *   blocking; the page and its two assets are served from memory. No request reads any other file.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { type FSWatcher, mkdirSync, watch } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { basename } from 'node:path';
import type { SFNClient } from '@aws-sdk/client-sfn';
import { PROJECT_ROOT } from '../../core/paths.ts';
import { type SynthesizedApp, synthProject } from '../../local/cloud/synth.ts';
import { DEFAULT_STATE_DIRS, type StateDirs } from '../../local/records/state-dirs.ts';
import { HttpError, type Route, StudioApi } from './api.ts';
import { type Assets, indexHtml, loadAssets } from './assets.ts';

export interface StudioOptions {
  /** The port on 127.0.0.1; 0 picks a free one. @default 4319 */
  port?: number;
  /** The state folders. @default the project's `.stepwise/` */
  dirs?: StateDirs;
  /** `--aws`: the SFN client deployed executions are listed and imported with (read-only). @default no AWS */
  aws?: SFNClient;
  /** `POWERTOOLS_LOG_LEVEL` of the functions of runs, forks and resumes. @default 'SILENT' */
  logLevel?: string;
  /** The OTLP/HTTP traces URL every run, fork and resume is exported to (`--otlp`). @default none */
  otlp?: string;
  /** Told when a trace could not be exported. @default stderr */
  onWarning?: (message: string) => void;
  /** The bundled UI. @default `loadAssets()` */
  assets?: Assets;
  /**
   * The workflows shown, compiled, and the folder of their definitions (tests show fixture workflows; runs and forks
   * from the page still start the project's). @default the project's (`synthProject()`)
   */
  workflows?: { app: SynthesizedApp; statemachines: string };
}

export interface Studio {
  url: string;
  port: number;
  /** The token changes must carry (tests, scripts). */
  token: string;
  /** Whether the UI was served from `dist/` (prebuilt) or bundled from the sources at start. */
  prebuilt: boolean;
  close(): Promise<void>;
}

/** Request bodies: an imported history can be large, anything else is small. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  type: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': type, 'Cache-Control': 'no-store', ...extra });
  res.end(body);
}

const sendJson = (res: ServerResponse, status: number, value: unknown) =>
  send(res, status, JSON.stringify(value), 'application/json; charset=utf-8');

async function readBody(req: IncomingMessage): Promise<unknown> {
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? ''))
    throw new HttpError(415, 'send the body as application/json');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `the body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
  } catch (e) {
    throw new HttpError(400, `the body is not JSON: ${(e as Error).message}`);
  }
}

/**
 * Start Studio. It listens until `close()`.
 * @example const studio = await startStudio({ port: 0 }); console.log(studio.url);
 */
export async function startStudio(options: StudioOptions = {}): Promise<Studio> {
  const dirs = options.dirs ?? DEFAULT_STATE_DIRS;
  for (const dir of [dirs.executions, dirs.pauses, dirs.imports, dirs.evals, dirs.refused])
    mkdirSync(dir, { recursive: true });
  const loaded = options.assets ? { assets: options.assets, prebuilt: false } : await loadAssets();
  const token = randomBytes(24).toString('base64url');
  const api = new StudioApi({
    dirs,
    aws: options.aws,
    logLevel: options.logLevel ?? 'SILENT',
    app: options.workflows?.app ?? (await synthProject()),
    ...(options.workflows && { statemachines: options.workflows.statemachines }),
    ...(options.otlp && { otlp: options.otlp }),
    ...(options.onWarning && { onWarning: options.onWarning }),
  });
  let port = 0;
  const live = liveStream(dirs);
  const site: Site = { api, assets: loaded.assets, token, live, port: () => port };
  const server = createServer((req, res) => void answer(req, res, site));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 4319, '127.0.0.1', () => resolve());
  });
  port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    token,
    prebuilt: loaded.prebuilt,
    async close() {
      live.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await api.settle();
    },
  };
}

/** What requests are answered from: the API, the UI's assets, the live stream and the page's token. */
interface Site {
  api: StudioApi;
  assets: Assets;
  token: string;
  live: LiveStream;
  /** The port the server listens on, known once it listens. */
  port: () => number;
}

/** Answer one request: the page, an asset, the live stream, or the API (a change only past {@link checkChange}). */
async function answer(req: IncomingMessage, res: ServerResponse, site: Site): Promise<void> {
  const { api, token } = site;
  try {
    const port = site.port();
    if (!allowedHosts(port).has(req.headers.host ?? ''))
      throw new HttpError(421, 'this server answers only to 127.0.0.1 and localhost');
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    const path = url.pathname;
    if (req.method === 'GET' && (path === '/' || path === '/index.html'))
      return send(res, 200, indexHtml(token, basename(PROJECT_ROOT)), 'text/html; charset=utf-8');
    if (req.method === 'GET' && path.startsWith('/assets/')) {
      const asset = site.assets.get(path.slice('/assets/'.length));
      if (!asset) throw new HttpError(404, 'no such asset');
      return send(res, 200, asset.body, asset.type);
    }
    if (req.method === 'GET' && path === '/favicon.ico') return send(res, 204, '', 'image/x-icon');
    if (req.method === 'GET' && path === '/api/live') return site.live.subscribe(req, res);
    if (!path.startsWith('/api/')) throw new HttpError(404, 'not found');
    if (req.method !== 'GET' && req.method !== 'POST') throw new HttpError(405, 'GET or POST only');
    const route: Route = {
      method: req.method,
      segments: path.slice('/api/'.length).split('/').map(decodeSegment),
      query: url.searchParams,
    };
    if (req.method === 'POST') {
      checkChange(req, token, port);
      route.body = await readBody(req);
    }
    sendJson(res, 200, await api.handle(route));
  } catch (e) {
    const status = e instanceof HttpError ? e.status : api.statusOf(e);
    if (!res.headersSent)
      sendJson(res, status, { error: { type: (e as Error).name, message: (e as Error).message.split('\n')[0] } });
    else res.end();
  }
}

/** The `Host` values answered: a DNS-rebound name is refused. */
const allowedHosts = (port: number) => new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
const allowedOrigins = (port: number) => new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`]);

/** Refuse a change sent cross-site or without the page's token. */
function checkChange(req: IncomingMessage, token: string, port: number): void {
  const origin = req.headers.origin;
  if (origin !== undefined && !allowedOrigins(port).has(origin)) throw new HttpError(403, 'cross-site request refused');
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    throw new HttpError(403, 'cross-site request refused');
  const sent = Buffer.from(String(req.headers['x-stepwise-token'] ?? ''));
  const expected = Buffer.from(token);
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected))
    throw new HttpError(403, 'missing or wrong X-Stepwise-Token');
}

/** The server-sent event stream of the live view. */
interface LiveStream {
  /** Keep `res` open as an event stream until the client goes away. */
  subscribe(req: IncomingMessage, res: ServerResponse): void;
  /** Stop watching and end every stream. */
  close(): void;
}

/**
 * Watch the state folders and tell every subscriber what changed: one `change` event per 100 ms
 * burst, with the changed record names by kind, and a comment every 15 s so proxies keep it open.
 */
function liveStream(dirs: StateDirs): LiveStream {
  const clients = new Set<ServerResponse>();
  const changed = new Map<string, Set<string>>();
  let pending: NodeJS.Timeout | undefined;
  const broadcast = () => {
    pending = undefined;
    const message = JSON.stringify(Object.fromEntries([...changed].map(([kind, names]) => [kind, [...names]])));
    changed.clear();
    for (const client of clients) client.write(`event: change\ndata: ${message}\n\n`);
  };
  const kinds = [
    ['executions', dirs.executions],
    ['pauses', dirs.pauses],
    ['imports', dirs.imports],
    ['evals', dirs.evals],
    ['refused', dirs.refused],
  ] as const;
  const watchers: FSWatcher[] = kinds.map(([kind, dir]) =>
    watch(dir, { recursive: kind === 'evals' }, (_, file) => {
      const name = file ? basename(String(file)).replace(/\.json$/, '') : '';
      changed.set(kind, (changed.get(kind) ?? new Set()).add(name));
      pending ??= setTimeout(broadcast, 100);
    }),
  );
  const heartbeat = setInterval(() => {
    for (const client of clients) client.write(': keep-alive\n\n');
  }, 15_000);
  return {
    subscribe(req, res) {
      res.writeHead(200, {
        ...SECURITY_HEADERS,
        'Content-Type': 'text/event-stream',
        'Cache-Control': 'no-store',
        Connection: 'keep-alive',
      });
      res.write('retry: 1000\n\n');
      clients.add(res);
      req.on('close', () => clients.delete(res));
    },
    close() {
      clearInterval(heartbeat);
      clearTimeout(pending);
      for (const w of watchers) w.close();
      for (const client of clients) client.end();
    },
  };
}

/** A path segment, decoded; a malformed escape is a bad request, not a crash. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, 'malformed URL');
  }
}
