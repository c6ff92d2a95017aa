import {
  createServer,
  type Http2Server,
  type Http2Session,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import type { AddressInfo } from 'node:net';

/** One request the fake Bedrock endpoint received. */
export interface ReceivedCall {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

/** What the fake endpoint answers: a status, optional headers and a JSON body; `hang` never answers. */
export type Reply = { status: number; headers?: Record<string, string>; body?: unknown } | 'hang';

/**
 * A local server speaking the Bedrock Runtime Converse wire format (`POST /model/{modelId}/converse`,
 * JSON, errors typed by the `x-amzn-errortype` header) over cleartext HTTP/2, which is what the
 * SDK's default handler for this client speaks.
 */
export class ConverseServer {
  readonly calls: ReceivedCall[] = [];
  private replies: Reply[] = [];
  private readonly hung = new Set<ServerHttp2Stream>();
  private readonly sessions = new Set<Http2Session>();
  private server?: Http2Server;

  /** Queue the answers for the next requests, in order. */
  reply(...replies: Reply[]): void {
    this.replies.push(...replies);
  }

  async start(): Promise<string> {
    this.server = createServer();
    this.server.on('session', (session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
    });
    this.server.on('stream', (stream, headers) => {
      let text = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => (text += chunk));
      stream.on('end', () => {
        this.calls.push({ path: String(headers[':path']), headers, body: text ? JSON.parse(text) : undefined });
        const reply = this.replies.shift() ?? { status: 500, body: { message: 'no reply queued' } };
        if (reply === 'hang') {
          this.hung.add(stream);
          return;
        }
        stream.respond({ ':status': reply.status, 'content-type': 'application/json', ...reply.headers });
        stream.end(JSON.stringify(reply.body ?? {}));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const stream of this.hung) stream.close();
    // Clients keep their HTTP/2 sessions open for reuse; close() would wait for them.
    for (const session of this.sessions) session.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** A successful Converse body. */
export function converseBody(content: unknown[], stopReason: string, usage: Record<string, number> = {}) {
  return {
    output: { message: { role: 'assistant', content } },
    stopReason,
    usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, ...usage },
    metrics: { latencyMs: 12 },
  };
}

/** A Bedrock error response the way the service sends it. */
export function serviceError(status: number, type: string, message: string): Reply {
  return {
    status,
    headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
    body: { message },
  };
}
