/**
 * The hostile and injection email corpus: every `.eml` under `emails/`, with its expected ingress
 * outcome from `expected.yaml`. Independent of any runtime, so the ingress test, the end-to-end
 * runs and scripts can all iterate the same emails.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { checkDefinition, parseDefinitionYaml } from '../../src/definitions/definition-file.ts';
import { DefinitionError } from '../../src/core/errors.ts';
import { REJECT_REASONS, type RejectReason } from '../../src/runtime/triggers/email/checks.ts';

export const CORPUS_DIR = dirname(fileURLToPath(import.meta.url));

/** What an injection tries to make the agent do. */
export const ATTACKS = ['recipient', 'serial', 'priority', 'tool', 'route', 'leak', 'link', 'header-injection'] as const;
export type Attack = (typeof ATTACKS)[number];

export type ExpectedIngress = { status: 'ACCEPTED' } | { status: 'REJECTED'; reason: RejectReason };

const Expect = z.string().transform((text, ctx): ExpectedIngress => {
  if (text === 'ACCEPTED') return { status: 'ACCEPTED' };
  const reason = /^REJECTED ([a-z_]+)$/.exec(text)?.[1];
  if (reason && (REJECT_REASONS as readonly string[]).includes(reason)) return { status: 'REJECTED', reason: reason as RejectReason };
  ctx.addIssue({ code: 'custom', message: `expected "ACCEPTED" or "REJECTED <reason>" with one of ${REJECT_REASONS.join(', ')}, got ${JSON.stringify(text)}` });
  return z.NEVER;
});

const Entry = z
  .object({
    file: z.string().regex(/^(injection|hostile)\/[0-9]{3}-[a-z0-9-]+\.eml$/),
    category: z.enum(['injection', 'hostile']),
    expect: Expect,
    attack: z.enum(ATTACKS).optional(),
    /** The only address a reply may go to (the single, verified From). */
    expectFrom: z.email().optional(),
    /** Ingress policy overrides for this email (a size limit small enough to keep the corpus small). */
    policy: z.object({ maxBytes: z.number().int().positive() }).strict().optional(),
    note: z.string().optional(),
  })
  .strict()
  .refine((e) => e.file.startsWith(`${e.category}/`), { message: 'file must be under its category folder' })
  .refine((e) => e.category !== 'injection' || e.attack !== undefined, { message: 'an injection names its attack' });

const Manifest = z.array(Entry).min(1);

export type CorpusEntry = z.infer<typeof Entry>;
export interface CorpusEmail extends CorpusEntry {
  /** The raw MIME bytes, as SES would store them. */
  raw: Uint8Array;
}

function emlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.eml'))
    .map((f) => f.split('\\').join('/'))
    .sort();
}

/**
 * Every corpus email with its expected outcome, in manifest order.
 * @throws DefinitionError when the manifest is malformed, names a file twice, or an `.eml` file and
 *   the manifest disagree (a file without an expectation, or an expectation without a file).
 */
export function loadCorpus(dir: string = CORPUS_DIR): CorpusEmail[] {
  const manifestFile = join(dir, 'expected.yaml');
  const where = relative(process.cwd(), manifestFile);
  const entries = checkDefinition(Manifest, parseDefinitionYaml(readFileSync(manifestFile, 'utf8'), where), where);
  const listed = entries.map((e) => e.file);
  const duplicate = listed.find((f, i) => listed.indexOf(f) !== i);
  if (duplicate) throw new DefinitionError(where, duplicate, 'listed twice');
  const onDisk = emlFiles(join(dir, 'emails'));
  const unlisted = onDisk.find((f) => !listed.includes(f));
  if (unlisted) throw new DefinitionError(where, unlisted, 'an email without an expected outcome');
  const missing = listed.find((f) => !onDisk.includes(f));
  if (missing) throw new DefinitionError(where, missing, 'no such file under emails/');
  return entries.map((e) => ({ ...e, raw: new Uint8Array(readFileSync(join(dir, 'emails', e.file))) }));
}
