import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake endpoint received. */
export interface ChatCall {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

/** What the fake answers: a status, headers and a JSON body, or a function of the request. */
export type ChatReply = { status: number; headers?: Record<string, string>; body?: unknown };

/**
 * A local server speaking the OpenAI chat-completions wire format (`POST /v1/chat/completions`,
 * JSON in and out, errors as `{ error: { message, type, code } }`): answers are queued in order, or
 * computed by `respond` from the request (a scripted model).
 */
export class ChatServer {
  readonly calls: ChatCall[] = [];
  private replies: ChatReply[] = [];
  private server?: Server;

  constructor(private readonly respond?: (body: any) => ChatReply) {}

  reply(...replies: ChatReply[]): void {
    this.replies.push(...replies);
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        const body = text ? JSON.parse(text) : undefined;
        this.calls.push({ path: String(req.url), headers: req.headers, body });
        const reply = this.replies.shift() ??
          this.respond?.(body) ?? {
            status: 500,
            body: { error: { message: 'no reply queued', type: 'server_error' } },
          };
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {}));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** A chat completion that calls one tool. */
export const toolCallReply = (
  name: string,
  args: unknown,
  usage = { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
): ChatReply => ({
  status: 200,
  body: {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify(args) } }],
        },
      },
    ],
    usage,
  },
});
