/**
 * Conversation sessions of the turn pipeline: what one turn leaves for the next (active scenario
 * and step, variables, profile, rule fires, clarification counts, recent history), persisted per
 * session id.
 *
 * Concurrency: a turn holds the session's lease from `begin` to `commit`. A second turn of the
 * same session that arrives meanwhile is rejected with `SessionBusyError` (it is not queued: the
 * client resends, as it would after any error); an abandoned lease expires after `leaseMs`.
 * `commit` writes only if the version is the one `begin` read and the lease is still this turn's.
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { StepwiseError } from 'stepwise';
import { documentClient, fromStoredJson, JsonObjectSchema, toStoredJson } from 'stepwise/dynamodb';
import * as z from 'zod';

/** Another turn of the session holds its lease. Permanent for this turn: resend it later. */
export class SessionBusyError extends StepwiseError {}
/** The session changed since this turn read it (an expired lease was taken over). Permanent for this turn. */
export class SessionConflictError extends StepwiseError {}

/** A completed turn kept as a memory episode: what the user said and what was answered. */
export const EpisodeSchema = z
  .object({
    turn: z.number().int().positive(),
    scenario: z.string().nullable(),
    user: z.string(),
    agent: z.string(),
  })
  .strict();
export type Episode = z.infer<typeof EpisodeSchema>;

const Fires = z.object({ count: z.number().int().nonnegative(), lastTurn: z.number().int().nonnegative() }).strict();

export const SessionSchema = z
  .object({
    sessionId: z.string().min(1),
    /** Incremented by every commit. 0: never saved. */
    version: z.number().int().nonnegative(),
    /** Turns completed. */
    turn: z.number().int().nonnegative(),
    activeScenario: z.string().nullable(),
    activeStep: z.string().nullable(),
    /** What the model extracted: any JSON, kept as it came. */
    variables: JsonObjectSchema,
    profile: JsonObjectSchema,
    ruleFires: z.record(z.string(), Fires),
    /** Clarifications asked, per `<scenario>/<step>` (reset when the step changes). */
    clarifications: z.record(z.string(), z.number().int().nonnegative()),
    history: z.array(z.object({ role: z.enum(['user', 'agent']), text: z.string() }).strict()),
    /** Memory: every completed turn (the latest `EPISODES_KEPT`), recalled by relevance into generation. */
    episodes: z.array(EpisodeSchema).default([]),
    escalated: z.boolean(),
    /** The profile schema version `profile` follows; sessions saved before versioning are version 1. */
    profileSchemaVersion: z.number().int().min(1).default(1),
  })
  .strict();
export type Session = z.infer<typeof SessionSchema>;

/** Turns of history kept (each turn is two entries): enough context, bounded state. */
export const HISTORY_TURNS = 6;
/** Memory episodes kept per session, and the characters kept of each text: bounded state and embeddings. */
export const EPISODES_KEPT = 20;
export const EPISODE_TEXT_CHARS = 500;

/** The episode a completed turn leaves in memory. */
export const episodeOf = (turn: number, scenario: string | null, user: string, agent: string): Episode => ({
  turn,
  scenario,
  user: user.slice(0, EPISODE_TEXT_CHARS),
  agent: agent.slice(0, EPISODE_TEXT_CHARS),
});

export const newSession = (sessionId: string): Session => ({
  sessionId,
  version: 0,
  turn: 0,
  activeScenario: null,
  activeStep: null,
  variables: {},
  profile: {},
  ruleFires: {},
  clarifications: {},
  history: [],
  episodes: [],
  escalated: false,
  profileSchemaVersion: 1,
});

/** The session store port; every adapter passes test/examples/turn-pipeline/session-store-conformance.ts. */
export interface SessionStore {
  /** Read the session (a new one when there is none) and take its lease for `execution`. @throws SessionBusyError */
  begin(sessionId: string, execution: string, now: Date): Promise<Session>;
  /** Save the turn's session (version + 1) and release the lease. @throws SessionConflictError */
  commit(session: Session, execution: string): Promise<Session>;
  /** Release the lease if `execution` holds it (a turn that ends without a commit). */
  release(sessionId: string, execution: string): Promise<void>;
}

/** @default 5 minutes: longer than any turn (a Standard execution of ~10 Lambda steps). */
export const DEFAULT_LEASE_MS = 5 * 60_000;

interface Lease {
  execution: string;
  until: number;
}

const busy = (sessionId: string, lease: Lease) =>
  new SessionBusyError(
    `session ${sessionId} is busy: turn ${lease.execution} is still running (until ${new Date(lease.until).toISOString()}); resend this turn when it has finished`,
  );

/** In-memory adapter: tests, and the tool's ports in evals (one store per case). */
export function memorySessionStore(leaseMs = DEFAULT_LEASE_MS): SessionStore {
  const items = new Map<string, { session: Session; lease?: Lease }>();
  return {
    async begin(sessionId, execution, now) {
      const item = items.get(sessionId) ?? { session: newSession(sessionId) };
      if (item.lease && item.lease.execution !== execution && item.lease.until > now.getTime())
        throw busy(sessionId, item.lease);
      items.set(sessionId, { session: item.session, lease: { execution, until: now.getTime() + leaseMs } });
      return structuredClone(item.session);
    },
    async commit(session, execution) {
      const item = items.get(session.sessionId);
      const stored = item?.session.version ?? 0;
      if (stored !== session.version || item?.lease?.execution !== execution)
        throw new SessionConflictError(
          `session ${session.sessionId} changed since turn ${execution} read it (version ${stored}, read ${session.version})`,
        );
      const saved = { ...structuredClone(session), version: session.version + 1 };
      items.set(session.sessionId, { session: saved });
      return structuredClone(saved);
    },
    async release(sessionId, execution) {
      const item = items.get(sessionId);
      if (item?.lease?.execution === execution) items.set(sessionId, { session: item.session });
    },
  };
}

/**
 * SessionsTable adapter: one item per session (`pk = SESSION#<id>`, `sk = SESSION`) holding the
 * session (as JSON text: its variables are whatever the model extracted, see src/core/dynamo-json.ts),
 * its `version` and the lease (`leaseExecution`, `leaseUntil`). Taking the lease and committing are
 * conditional writes, so two turns never both proceed.
 */
export function dynamoSessionStore(
  client: DynamoDBClient,
  tableName: string,
  leaseMs = DEFAULT_LEASE_MS,
): SessionStore {
  const doc = documentClient(client);
  const key = (sessionId: string) => ({ pk: `SESSION#${sessionId}`, sk: 'SESSION' });
  return {
    async begin(sessionId, execution, now) {
      try {
        const out = await doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: key(sessionId),
            UpdateExpression: 'SET leaseExecution = :e, leaseUntil = :u',
            ConditionExpression: 'attribute_not_exists(leaseExecution) OR leaseExecution = :e OR leaseUntil < :now',
            ExpressionAttributeValues: { ':e': execution, ':u': now.getTime() + leaseMs, ':now': now.getTime() },
            ReturnValues: 'ALL_NEW',
          }),
        );
        const item = out.Attributes ?? {};
        return item.session ? SessionSchema.parse(fromStoredJson(item.session)) : newSession(sessionId);
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) throw e;
        const held = await doc.send(
          new GetCommand({ TableName: tableName, Key: key(sessionId), ConsistentRead: true }),
        );
        throw busy(sessionId, { execution: String(held.Item?.leaseExecution), until: Number(held.Item?.leaseUntil) });
      }
    },
    async commit(session, execution) {
      const saved = { ...session, version: session.version + 1 };
      try {
        await doc.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...key(session.sessionId), session: toStoredJson(saved), version: saved.version },
            ConditionExpression: 'leaseExecution = :e AND (attribute_not_exists(version) OR version = :v)',
            ExpressionAttributeValues: { ':e': execution, ':v': session.version },
          }),
        );
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) throw e;
        throw new SessionConflictError(
          `session ${session.sessionId} changed since turn ${execution} read it (read version ${session.version})`,
        );
      }
      return saved;
    },
    async release(sessionId, execution) {
      try {
        await doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: key(sessionId),
            UpdateExpression: 'REMOVE leaseExecution, leaseUntil',
            ConditionExpression: 'leaseExecution = :e',
            ExpressionAttributeValues: { ':e': execution },
          }),
        );
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) throw e;
      }
    },
  };
}
