/**
 * An in-process EventBridge built from a synthesized CloudFormation template: the template's
 * `AWS::Events::Rule`s (pattern, state, targets with their input settings, retry policy and DLQ)
 * route the events given to `putEvents` (or to the PutEvents HTTP endpoint, for the real SDK
 * client) to an injected `deliver` callback. The bus knows nothing about Lambda or Step Functions:
 * the local runtime maps target ARNs to local handlers and executions.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import * as z from 'zod';
import { DefinitionError, InvalidEventPatternError, InvalidInputError, StepwiseError } from '../../../core/errors.ts';
import { type CfnTemplate, LOCAL_ACCOUNT, LOCAL_REGION, resolveIntrinsics } from '../intrinsics.ts';
import { compileTargetInput, type InputBuilder } from './input.ts';
import { compilePattern, type EventMatcher } from './pattern.ts';

/** The event envelope EventBridge delivers to targets. */
export interface EventEnvelope {
  version: '0';
  id: string;
  'detail-type': string;
  source: string;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: Record<string, unknown>;
}

/**
 * One PutEvents request entry (the API's field names). `Time` may be a Date, ISO text or epoch seconds (the SDK's wire
 * form).
 */
export interface PutEventsEntry {
  Source?: string;
  DetailType?: string;
  /** The event detail as JSON text; must be a JSON object. */
  Detail?: string;
  /** Name or ARN. @default 'default' */
  EventBusName?: string;
  Time?: Date | string | number;
  Resources?: string[];
  TraceHeader?: string;
}

/** Per-entry result, in request order: an `EventId`, or an error code and message for that entry alone. */
export interface PutEventsResultEntry {
  EventId?: string;
  ErrorCode?: string;
  ErrorMessage?: string;
}

export interface PutEventsResult {
  FailedEntryCount: number;
  Entries: PutEventsResultEntry[];
}

/** Which rule and target a delivery is for. */
export interface DeliveryContext {
  readonly ruleLogicalId: string;
  readonly ruleName: string;
  readonly targetId: string;
  /**
   * The matched event as put on the bus, shared with `published`: read it, do not change it (`input` is the target's
   * own copy).
   */
  readonly event: EventEnvelope;
}

/**
 * Hands a target its input (the event, or what Input/InputPath/InputTransformer made of it).
 * A throw or rejection is a failed delivery: retried per the target's RetryPolicy, then dead-lettered.
 */
export type Deliver = (targetArn: string, input: unknown, context: DeliveryContext) => unknown;

/** A delivery that failed all its attempts. EventBridge would send it to `deadLetterArn` (when set). */
export interface DeadLetter {
  readonly targetArn: string;
  readonly deadLetterArn: string | undefined;
  readonly ruleLogicalId: string;
  readonly targetId: string;
  readonly event: EventEnvelope;
  readonly error: Error;
  readonly attempts: number;
}

export interface LocalEventBusOptions {
  /** Receives every delivery. */
  readonly deliver: Deliver;
  /**
   * Turns a CloudFormation value (literal or intrinsic, e.g. `{ "Fn::GetAtt": ["Fn", "Arn"] }`)
   * into a string: used for target ARNs, DLQ ARNs and `EventBusName`.
   * @default the value resolved with `resolveIntrinsics(value, template)` from src/local/cloud/intrinsics.ts
   */
  readonly resolve?: (value: unknown) => string;
  /** The envelope's `account`. @default LOCAL_ACCOUNT */
  readonly account?: string;
  /** The envelope's `region`. @default LOCAL_REGION */
  readonly region?: string;
  /** The clock: when an event is accepted (its `time` unless the entry sets `Time`). @default () => new Date() */
  readonly now?: () => Date;
}

/** A rule as the bus uses it. */
export interface LocalRule {
  readonly logicalId: string;
  readonly name: string;
  readonly arn: string;
  readonly eventBusName: string;
  readonly matches: EventMatcher;
  readonly targets: readonly LocalTarget[];
}

export interface LocalTarget {
  readonly id: string;
  readonly arn: string;
  readonly deadLetterArn: string | undefined;
  /**
   * Deliveries after the first failure (the template's RetryPolicy.MaximumRetryAttempts; AWS's default of 185 over 24 h
   * would only stall a local run).
   */
  readonly maxRetries: number;
  readonly input: InputBuilder;
}

/** A running PutEvents HTTP endpoint. */
export interface HttpEndpoint {
  /** `http://127.0.0.1:<port>`: set it as `AWS_ENDPOINT_URL_EVENTBRIDGE` for handlers. */
  readonly endpoint: string;
  stop(): Promise<void>;
}

export const DEFAULT_EVENT_BUS = 'default';
const MAX_ENTRIES = 10;
/** PutEvents takes requests whose entries total less than 256 KiB (entry sizes as {@link entrySize} counts them). */
export const MAX_PUT_EVENTS_BYTES = 256 * 1024;

/**
 * The size EventBridge counts of a PutEvents entry: 14 bytes for `Time` when given, and the UTF-8
 * bytes of `Source`, `DetailType`, `Detail` and each of `Resources`.
 */
export function entrySize(entry: PutEventsEntry): number {
  const utf8 = (text: string | undefined) => (text === undefined ? 0 : Buffer.byteLength(text, 'utf8'));
  return (
    (entry.Time === undefined ? 0 : 14) +
    utf8(entry.Source) +
    utf8(entry.DetailType) +
    utf8(entry.Detail) +
    (entry.Resources ?? []).reduce((n, r) => n + utf8(r), 0)
  );
}

const Target = z.object({
  Id: z.string().min(1),
  Arn: z.unknown(),
  Input: z.string().optional(),
  InputPath: z.string().optional(),
  InputTransformer: z
    .object({ InputPathsMap: z.record(z.string(), z.string()).optional(), InputTemplate: z.string() })
    .optional(),
  DeadLetterConfig: z.object({ Arn: z.unknown().optional() }).optional(),
  RetryPolicy: z.object({ MaximumRetryAttempts: z.number().int().min(0).optional() }).optional(),
});
const RuleProperties = z.object({
  Name: z.unknown().optional(),
  EventBusName: z.unknown().optional(),
  EventPattern: z.unknown().optional(),
  State: z.string().optional(),
  Targets: z.array(Target).optional(),
});

const PutEventsEntrySchema = z.object({
  Source: z.string().optional(),
  DetailType: z.string().optional(),
  Detail: z.string().optional(),
  EventBusName: z.string().optional(),
  Time: z.union([z.date(), z.string(), z.number()]).optional(),
  Resources: z.array(z.string()).optional(),
  TraceHeader: z.string().optional(),
});
const PutEventsRequest = z.object({
  Entries: z.array(PutEventsEntrySchema).min(1).max(MAX_ENTRIES),
  EndpointId: z.string().optional(),
});

/** A rule's pattern, compiled; a malformed one names the rule in the template. */
function compileRulePattern(pattern: unknown, where: string): EventMatcher {
  try {
    return compilePattern(pattern);
  } catch (e) {
    if (e instanceof InvalidEventPatternError) throw new DefinitionError('template', where, e.message);
    throw e;
  }
}

function entryError(code: string, message: string): PutEventsResultEntry {
  return { ErrorCode: code, ErrorMessage: message };
}

function toError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** ISO 8601 without milliseconds, as EventBridge writes `time`. */
function eventTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The local EventBridge. Construct it from a synthesized template; `putEvents` returns at once and
 * delivers in the background; `drain()` waits for every delivery, including those of events that
 * targets put while handling theirs.
 * @example
 * const bus = new LocalEventBus(template, { deliver: (arn, input) => runTarget(arn, input) });
 * await bus.putEvents([{ Source: 'crm', DetailType: 'lead.created', Detail: JSON.stringify({ id: 1 }) }]);
 * await bus.drain();
 */
export class LocalEventBus {
  /** Enabled rules with an event pattern (scheduled and disabled rules never match a put event). */
  readonly rules: readonly LocalRule[];
  /** Every bus the template defines, by name, plus `default`. */
  readonly eventBusNames: ReadonlySet<string>;
  /** Every event accepted, in order. */
  readonly published: EventEnvelope[] = [];
  /** Every delivery that failed all its attempts (never dropped silently). */
  readonly deadLetters: DeadLetter[] = [];

  private readonly pending = new Set<Promise<void>>();
  private readonly options: LocalEventBusOptions;
  /** Bus name or ARN → bus name. */
  private readonly busAliases = new Map<string, string>();

  /**
   * @throws DefinitionError naming the rule, target or pattern path that is malformed.
   */
  constructor(template: CfnTemplate, options: LocalEventBusOptions) {
    this.options = options;
    const resolve =
      options.resolve ??
      ((value: unknown) =>
        String(resolveIntrinsics(value, template, { region: this.region, accountId: this.account })));
    const resources = Object.entries(template.Resources ?? {});
    // A bus is named as `Ref` resolves it and also known by its resolved ARN, so rules and
    // handlers (EVENT_BUS_NAME from a Ref or a GetAtt Arn) agree on which bus they mean.
    this.busAliases.set(DEFAULT_EVENT_BUS, DEFAULT_EVENT_BUS);
    this.busAliases.set(
      `arn:aws:events:${this.region}:${this.account}:event-bus/${DEFAULT_EVENT_BUS}`,
      DEFAULT_EVENT_BUS,
    );
    for (const [id] of resources.filter(([, r]) => r.Type === 'AWS::Events::EventBus')) {
      const name = resolve({ Ref: id });
      this.busAliases.set(name, name);
      this.busAliases.set(resolve({ 'Fn::GetAtt': [id, 'Arn'] }), name);
    }
    this.eventBusNames = new Set(this.busAliases.values());
    this.rules = resources
      .filter(([, r]) => r.Type === 'AWS::Events::Rule')
      .flatMap(([logicalId, resource]) => {
        const where = `Resources.${logicalId}.Properties`;
        const parsed = RuleProperties.safeParse(resource.Properties ?? {});
        if (!parsed.success) {
          const issue = parsed.error.issues[0]!;
          throw new DefinitionError('template', `${where}.${issue.path.join('.')}`, issue.message);
        }
        const p = parsed.data;
        if (p.EventPattern === undefined || (p.State !== undefined && p.State !== 'ENABLED')) return [];
        const eventBusName = this.busNamed(p.EventBusName === undefined ? DEFAULT_EVENT_BUS : resolve(p.EventBusName));
        const name = typeof p.Name === 'string' ? p.Name : logicalId;
        const busPart = eventBusName === DEFAULT_EVENT_BUS ? '' : `${eventBusName}/`;
        return [
          {
            logicalId,
            name,
            arn: `arn:aws:events:${this.region}:${this.account}:rule/${busPart}${name}`,
            eventBusName,
            matches: compileRulePattern(p.EventPattern, `${where}.EventPattern`),
            targets: (p.Targets ?? []).map((t, i) => ({
              id: t.Id,
              arn: resolve(t.Arn),
              deadLetterArn: t.DeadLetterConfig?.Arn === undefined ? undefined : resolve(t.DeadLetterConfig.Arn),
              maxRetries: t.RetryPolicy?.MaximumRetryAttempts ?? 0,
              input: compileTargetInput(t, `${where}.Targets.${i}`),
            })),
          },
        ];
      });
  }

  /** The bus a name or ARN refers to (unknown ARNs: the name after `event-bus/`, which then matches no bus). */
  private busNamed(nameOrArn: string): string {
    const known = this.busAliases.get(nameOrArn);
    if (known !== undefined) return known;
    const marker = ':event-bus/';
    return nameOrArn.startsWith('arn:') && nameOrArn.includes(marker)
      ? nameOrArn.slice(nameOrArn.indexOf(marker) + marker.length)
      : nameOrArn;
  }

  private get account(): string {
    return this.options.account ?? LOCAL_ACCOUNT;
  }

  private get region(): string {
    return this.options.region ?? LOCAL_REGION;
  }

  /**
   * Put up to 10 events, like the PutEvents API: an invalid entry fails alone (`ErrorCode`,
   * `ErrorMessage`), valid ones get an `EventId` and are delivered asynchronously.
   * @throws InvalidInputError when there are no entries or more than 10, or they total 256 KiB or
   *   more (the API rejects the whole call: "Total size of the entries in the request is over the limit").
   */
  async putEvents(entries: readonly PutEventsEntry[]): Promise<PutEventsResult> {
    if (entries.length === 0 || entries.length > MAX_ENTRIES)
      throw new InvalidInputError(`PutEvents takes 1 to ${MAX_ENTRIES} entries, got ${entries.length}`);
    const bytes = entries.reduce((n, e) => n + entrySize(e), 0);
    if (bytes >= MAX_PUT_EVENTS_BYTES)
      throw new InvalidInputError(
        `Total size of the entries in the request is over the limit (${bytes} bytes, the limit is under ${MAX_PUT_EVENTS_BYTES})`,
      );
    const results = entries.map((entry) => this.accept(entry));
    return { FailedEntryCount: results.filter((r) => r.ErrorCode).length, Entries: results };
  }

  private accept(entry: PutEventsEntry): PutEventsResultEntry {
    for (const field of ['Source', 'DetailType', 'Detail'] as const) {
      if (!entry[field])
        return entryError(
          'InvalidArgument',
          `Parameter ${field} is not valid. Reason: ${field} is a required argument.`,
        );
    }
    let detail: unknown;
    try {
      detail = JSON.parse(entry.Detail!);
    } catch {
      return entryError('MalformedDetail', 'Detail is malformed.');
    }
    if (detail === null || typeof detail !== 'object' || Array.isArray(detail))
      return entryError('MalformedDetail', 'Detail is malformed.');
    const eventBusName = this.busNamed(entry.EventBusName ?? DEFAULT_EVENT_BUS);
    if (!this.eventBusNames.has(eventBusName))
      return entryError('ResourceNotFoundException', `Event bus ${eventBusName} does not exist.`);
    const accepted = this.options.now?.() ?? new Date();
    const time =
      entry.Time === undefined ? accepted : new Date(typeof entry.Time === 'number' ? entry.Time * 1000 : entry.Time);
    if (Number.isNaN(time.getTime())) return entryError('InvalidArgument', 'Parameter Time is not valid.');
    const event: EventEnvelope = {
      version: '0',
      id: randomUUID(),
      'detail-type': entry.DetailType!,
      source: entry.Source!,
      account: this.account,
      time: eventTime(time),
      region: this.region,
      resources: entry.Resources ?? [],
      detail: detail as Record<string, unknown>,
    };
    this.published.push(event);
    const ingestionTime = eventTime(accepted);
    for (const rule of this.rules) {
      if (rule.eventBusName !== eventBusName || !rule.matches(event)) continue;
      for (const target of rule.targets) this.track(this.deliverWithRetries(rule, target, event, ingestionTime));
    }
    return { EventId: event.id };
  }

  private track(delivery: Promise<void>): void {
    this.pending.add(delivery);
    void delivery.finally(() => this.pending.delete(delivery));
  }

  private async deliverWithRetries(
    rule: LocalRule,
    target: LocalTarget,
    event: EventEnvelope,
    ingestionTime: string,
  ): Promise<void> {
    const context: DeliveryContext = { ruleLogicalId: rule.logicalId, ruleName: rule.name, targetId: target.id, event };
    let error: Error | undefined;
    let attempts = 0;
    await Promise.resolve(); // deliver after putEvents has answered, like the service
    while (attempts <= target.maxRetries) {
      attempts++;
      try {
        // The input builder copies what it hands out: targets cannot change the event for each other.
        const input = target.input(event as unknown as Record<string, unknown>, {
          ruleName: rule.name,
          ruleArn: rule.arn,
          ingestionTime,
        });
        await this.options.deliver(target.arn, input, context);
        return;
      } catch (e) {
        error = toError(e);
      }
    }
    this.deadLetters.push({
      targetArn: target.arn,
      deadLetterArn: target.deadLetterArn,
      ruleLogicalId: rule.logicalId,
      targetId: target.id,
      event,
      error: error!,
      attempts,
    });
  }

  /** Resolves when no delivery is in flight, including deliveries of events put by targets meanwhile. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /**
   * Serve `AWSEvents.PutEvents` (JSON 1.1 protocol) on 127.0.0.1, so code using
   * `@aws-sdk/client-eventbridge` works unchanged with `AWS_ENDPOINT_URL_EVENTBRIDGE` set to
   * `endpoint`. Signatures are not checked.
   * @param port @default a free port
   */
  async startHttpEndpoint(port = 0): Promise<HttpEndpoint> {
    const server = createServer((req, res) => void this.handleHttp(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    const { port: bound } = server.address() as { port: number };
    return {
      endpoint: `http://127.0.0.1:${bound}`,
      stop: () =>
        new Promise<void>((resolve, reject) => {
          server.close((e) => (e ? reject(e) : resolve()));
          server.closeAllConnections();
        }),
    };
  }

  private async handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
      res.end(JSON.stringify(body));
    };
    const clientError = (type: string, message: string) => reply(400, { __type: type, message });
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const target = req.headers['x-amz-target'];
      if (req.method !== 'POST' || target !== 'AWSEvents.PutEvents')
        return clientError(
          'UnknownOperationException',
          `the local EventBridge only serves AWSEvents.PutEvents, not ${String(target)}`,
        );
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return clientError('SerializationException', 'the request body is not valid JSON');
      }
      const request = PutEventsRequest.safeParse(body);
      if (!request.success)
        return clientError(
          'ValidationException',
          request.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
        );
      reply(200, await this.putEvents(request.data.Entries));
    } catch (e) {
      if (e instanceof StepwiseError) return clientError('ValidationException', e.message);
      reply(500, { __type: 'InternalException', message: toError(e).message });
    }
  }
}
