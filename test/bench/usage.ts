/**
 * What the offline stand-in cannot report, estimated the way Bedrock bills it, so the cost model
 * has token counts: input and output tokens (4 characters per token, the usual rule of thumb for
 * English prose and JSON) and prompt caching as Bedrock applies it — the prefix up to the request's
 * cache point (tools, then system) is written to the cache on first use and read for 5 minutes
 * after, but only when it reaches the model's minimum tokens per checkpoint. And DynamoDB requests,
 * counted at the SDK for everything this process sends.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ConverseRequest, ModelProvider } from '../../src/runtime/contracts/model-port.ts';

const CHARS_PER_TOKEN = 4;
const CACHE_TTL_MS = 5 * 60_000;
const tokens = (value: unknown) =>
  Math.ceil((typeof value === 'string' ? value : JSON.stringify(value ?? '')).length / CHARS_PER_TOKEN);

/**
 * The cacheable prefix of a request (tools, then the system blocks before the cache point), or undefined without a
 * cache point.
 */
function cachedPrefix(request: ConverseRequest): string | undefined {
  const at = request.system.findIndex((b) => 'cachePoint' in b);
  if (at < 0) return undefined;
  return JSON.stringify([request.toolConfig ?? null, request.system.slice(0, at)]);
}

/**
 * Wrap a provider so its responses carry estimated usage, with Bedrock's cache rule for a model
 * whose checkpoint minimum is `minCacheTokens`. Its name stays the inner provider's.
 */
export function estimatingModel(
  inner: ModelProvider,
  minCacheTokens: number,
  now: () => number = Date.now,
): ModelProvider & { largestPrefixTokens: number } {
  const written = new Map<string, number>();
  const wrapper = {
    name: inner.name,
    largestPrefixTokens: 0,
    async converse(request: ConverseRequest, options?: Parameters<ModelProvider['converse']>[1]) {
      const response = await inner.converse(request, options);
      const total = tokens(request.system) + tokens(request.toolConfig) + tokens(request.messages);
      const prefix = cachedPrefix(request);
      const prefixTokens = prefix ? tokens(prefix) : 0;
      wrapper.largestPrefixTokens = Math.max(wrapper.largestPrefixTokens, prefixTokens);
      let cacheRead = 0;
      let cacheWrite = 0;
      if (prefix && prefixTokens >= minCacheTokens) {
        const last = written.get(prefix);
        if (last !== undefined && now() - last < CACHE_TTL_MS) cacheRead = prefixTokens;
        else cacheWrite = prefixTokens;
        written.set(prefix, now());
      }
      const outputTokens = tokens(response.output.message.content);
      return {
        ...response,
        usage: {
          inputTokens: total - cacheRead - cacheWrite,
          outputTokens,
          totalTokens: total + outputTokens,
          cacheReadInputTokens: cacheRead,
          cacheWriteInputTokens: cacheWrite,
        },
      };
    },
  };
  return wrapper;
}

/**
 * Request units per command, DynamoDB client and document client names alike (items of up to 1 KB written, 4 KB read).
 */
function requestUnits(kind: string, input: Record<string, any>): { reads: number; writes: number } {
  const name = kind
    .replace(/Command$/, '')
    .replace(/Item$/, '')
    .replace(/Items$/, '');
  const count = (table: Record<string, unknown[] | { Keys?: unknown[] }> | undefined) =>
    Object.values(table ?? {}).reduce<number>((n, v) => n + (Array.isArray(v) ? v.length : (v.Keys?.length ?? 0)), 0);
  switch (name) {
    case 'Get':
    case 'Query':
    case 'Scan':
      return { reads: 1, writes: 0 };
    case 'Put':
    case 'Update':
    case 'Delete':
      return { reads: 0, writes: 1 };
    case 'BatchGet':
      return { reads: count(input.RequestItems), writes: 0 };
    case 'BatchWrite':
      return { reads: 0, writes: count(input.RequestItems) };
    // Transactions cost two units per item.
    case 'TransactGet':
      return { reads: 2 * (input.TransactItems?.length ?? 0), writes: 0 };
    case 'TransactWrite':
      return { reads: 0, writes: 2 * (input.TransactItems?.length ?? 0) };
    default:
      return { reads: 0, writes: 0 };
  }
}

/**
 * DynamoDB request units this process used since the call, its requests by command and the input of
 * every `TransactWriteItems` (every SDK client shares the smithy `Client.prototype.send`, the document
 * client included); `stop()` restores it.
 */
export function countDynamoRequests(): {
  reads: number;
  writes: number;
  requests: Record<string, number>;
  transactWrites: Record<string, any>[];
  stop: () => void;
} {
  const counter = {
    reads: 0,
    writes: 0,
    requests: {} as Record<string, number>,
    transactWrites: [] as Record<string, any>[],
    stop: (): void => undefined,
  };
  const base = Object.getPrototypeOf(DynamoDBClient.prototype) as { send: (...a: unknown[]) => unknown };
  const original = base.send;
  base.send = function (
    this: object,
    command: { constructor: { name: string }; input?: Record<string, any> },
    ...rest: unknown[]
  ) {
    if (this instanceof DynamoDBClient || this.constructor.name === 'DynamoDBDocumentClient') {
      const units = requestUnits(command.constructor.name, command.input ?? {});
      counter.reads += units.reads;
      counter.writes += units.writes;
      const name = command.constructor.name.replace(/Command$/, '');
      counter.requests[name] = (counter.requests[name] ?? 0) + 1;
      if (name === 'TransactWrite') counter.transactWrites.push(command.input!);
    }
    return original.call(this, command, ...rest);
  } as (...a: unknown[]) => unknown;
  counter.stop = () => {
    base.send = original;
  };
  return counter;
}
