/** An OTLP/HTTP trace receiver on 127.0.0.1 for the tracing tests: it keeps every JSON request posted to /v1/traces. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OtlpSpan, OtlpTraceRequest } from '../../src/runtime/tracing/otlp.ts';

export interface OtlpReceiver {
  readonly url: string;
  readonly traces: OtlpTraceRequest[];
  readonly server: Server;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const traces: OtlpTraceRequest[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type'] === 'application/json') traces.push(JSON.parse(text));
      res.writeHead(req.url === '/v1/traces' ? 200 : 404, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, traces, server };
}

/** Every span of one trace request. */
export const spansOf = (trace: OtlpTraceRequest): OtlpSpan[] =>
  trace.resourceSpans.flatMap((r) => r.scopeSpans[0]!.spans);

/** The value of a span attribute (its OTLP `AnyValue`), or undefined. */
export const attr = (span: OtlpSpan, key: string) => span.attributes.find((a) => a.key === key)?.value as any;
