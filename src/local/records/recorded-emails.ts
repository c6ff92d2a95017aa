/**
 * The bodies of the emails a local session's email ingress received, kept as files (one per email
 * id) beside the execution records: a fork of an email execution runs in a new session whose
 * DynamoDB Local is empty, and its LLM steps read the body by the id in the execution input.
 * The ingress already caps a body at its `maxBodyChars`, so each file stays small. And the mail it
 * refused, one record each with the reason, so the executions list shows what never started.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { InboundEmailSchema } from '../../definitions/workflow/inbound-email.ts';
import type { EventLog } from '../../runtime/event-log.ts';
import { type EmailStore, type StoredEmail, type Thread, threadKey } from '../../runtime/triggers/email/store.ts';
import { readRecordFile, recordFile } from './history.ts';

const RecordedEmail = z.object({ email: InboundEmailSchema, body: z.string() });

/**
 * The email files under `dir`: `put` writes one once (the first delivery wins, as in the store), `get` reads it back.
 */
export function recordedEmails(dir: string): Pick<EmailStore, 'put' | 'get'> {
  return {
    async put(email, body) {
      const file = recordFile(email.id, dir);
      if (existsSync(file)) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(file, JSON.stringify({ email, body } satisfies StoredEmail) + '\n');
    },
    async get(id) {
      const file = recordFile(id, dir);
      return existsSync(file) ? readRecordFile(file, RecordedEmail) : undefined;
    },
  };
}

const ThreadFile = z.object({ messageId: z.string(), from: z.string(), emailId: z.string(), contested: z.boolean() });

/**
 * `store` whose threads are also kept as files under `dir` (one per Message-ID digest): a reply
 * delivered by a later session, whose DynamoDB Local is empty, still finds the thread its
 * customer's first mail opened. The files decide: they hold every session's threads.
 */
export function recordingThreads(store: EmailStore, dir: string): EmailStore {
  const file = (messageId: string) => join(dir, `${threadKey(messageId).slice('THREAD#'.length)}.json`);
  const read = (messageId: string): Thread | undefined =>
    existsSync(file(messageId)) ? readRecordFile(file(messageId), ThreadFile) : undefined;
  const write = (thread: Thread) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file(thread.messageId), JSON.stringify(thread) + '\n');
  };
  return {
    ...store,
    async claimThread(messageId, from, emailId) {
      await store.claimThread(messageId, from, emailId);
      const held = read(messageId);
      if (!held) write({ messageId, from, emailId, contested: false });
      else if (held.from !== from && !held.contested) write({ ...held, contested: true });
    },
    async thread(messageId) {
      return read(messageId) ?? store.thread(messageId);
    },
  };
}

/** `store` whose every `put` is also recorded in `copy`. */
export function recordingPuts(store: EmailStore, copy: Pick<EmailStore, 'put'>): EmailStore {
  return {
    ...store,
    async put(email, body) {
      await store.put(email, body);
      await copy.put(email, body);
    },
  };
}

/** Inbound mail the ingress refused: no execution ran; the ingress's reason code and detail say why. */
export const RefusedMailSchema = z.object({
  kind: z.literal('refused'),
  /** The execution name the mail would have had. */
  name: z.string(),
  workflow: z.string(),
  at: z.string(),
  emailId: z.string(),
  reason: z.string(),
  detail: z.string(),
  from: z.string().optional(),
});
export type RefusedMail = z.infer<typeof RefusedMailSchema>;

/** `events` whose every `IngressRejected` event is also kept as a refusal record of `workflow` in `dir`. */
export function recordingRefusals(events: EventLog, workflow: string, dir: string): EventLog {
  return {
    ...events,
    async append(event) {
      const appended = await events.append(event);
      if (appended && event.type === 'IngressRejected') {
        const record: RefusedMail = {
          kind: 'refused',
          name: event.executionName,
          workflow,
          at: event.at,
          emailId: event.emailId,
          reason: event.reason,
          detail: event.detail,
          ...(event.personal.from !== undefined && { from: event.personal.from }),
        };
        mkdirSync(dir, { recursive: true });
        writeFileSync(recordFile(record.name, dir), JSON.stringify(record, null, 2) + '\n');
      }
      return appended;
    },
  };
}
