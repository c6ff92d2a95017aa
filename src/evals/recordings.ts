/**
 * Record and replay of model calls (`stepwise eval --record` / `--replay`), for any workflow and
 * provider. Recording wraps the real provider: each request and its response are kept in the
 * workflow folder, `recordings/<step>/<hash>.json`, keyed by a hash of the request (system prompt,
 * messages, tools, inference settings and, for a panel step, the model). Replay answers from those
 * files alone, offline; a request that is not among them (a changed prompt, a changed input) fails
 * the run with one line naming the step. A recording that cannot be read (truncated, edited) fails
 * only the step that needs it, named by file and line; a file that is no recording (`.DS_Store`, a
 * folder among the recordings) is skipped with a warning.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { StepwiseError } from '../core/errors.ts';
import { relPath } from '../definitions/definition-file.ts';
import {
  type ConverseOptions,
  type ConverseRequest,
  type ConverseResponse,
  ConverseResponseSchema,
  type ModelProvider,
} from '../runtime/contracts/model-port.ts';
import { readStepContext } from '../runtime/contracts/prompt.ts';

/** The folder of a workflow's recordings. */
export const RECORDINGS_DIR = 'recordings';

/** A replayed request has no recording. Permanent: the prompt or the input changed since it was recorded. */
export class ReplayMissError extends StepwiseError {}

/** A recording file that is not JSON or not a recording; the message names its file and line. Permanent. */
export class BadRecordingError extends StepwiseError {}

/** JSON with object keys sorted: the same request always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** The key of a request: sha256 of its canonical JSON (with the panel model, when one was chosen). */
export function requestHash(request: ConverseRequest, panelModel?: string): string {
  return createHash('sha256')
    .update(canonical({ request, ...(panelModel !== undefined && { model: panelModel }) }))
    .digest('hex');
}

const RecordingSchema = z.object({
  step: z.string(),
  provider: z.string(),
  model: z.string().nullable(),
  hash: z.string(),
  request: z.unknown(),
  response: ConverseResponseSchema,
});
export type Recording = z.infer<typeof RecordingSchema>;

/** The step a request is for (the runner puts the step context first), or `unknown-step`. */
const stepOf = (request: ConverseRequest) => readStepContext(request)?.step ?? 'unknown-step';

const fileOf = (dir: string, step: string, hash: string) => join(dir, step, `${hash}.json`);

/**
 * `inner`, with every successful call written to `dir` (a recording per request; a repeated request
 * overwrites its own file with the same content).
 */
export function recordingModel(inner: ModelProvider, dir: string, panelModel?: string): ModelProvider {
  return {
    name: inner.name,
    ...(inner.modelId !== undefined && { modelId: inner.modelId }),
    async converse(request: ConverseRequest, options?: ConverseOptions): Promise<ConverseResponse> {
      const response = await inner.converse(request, options);
      const step = stepOf(request);
      const hash = requestHash(request, panelModel);
      mkdirSync(join(dir, step), { recursive: true });
      const recording: Recording = {
        step,
        provider: inner.name,
        model: inner.modelId ?? null,
        hash,
        request,
        response,
      };
      writeFileSync(fileOf(dir, step, hash), `${JSON.stringify(recording, null, 2)}\n`);
      return response;
    },
    forModel: (id) => recordingModel(inner.forModel?.(id) ?? inner, dir, id),
  };
}

/** A request replay could not answer. */
export interface ReplayMiss {
  step: string;
  hash: string;
}

/**
 * Answers from recordings only. Misses are thrown as `ReplayMissError` (the step fails as a
 * permanent error) and kept in `misses`, so the eval runner can stop with one line.
 */
export class ReplayModel implements ModelProvider {
  readonly name = 'replay' as const;

  constructor(
    private readonly dir: string,
    readonly misses: ReplayMiss[] = [],
    private readonly panelModel?: string,
  ) {}

  get modelId(): string | undefined {
    return this.panelModel;
  }

  async converse(request: ConverseRequest): Promise<ConverseResponse> {
    const step = stepOf(request);
    const hash = requestHash(request, this.panelModel);
    const file = fileOf(this.dir, step, hash);
    if (!existsSync(file)) {
      this.misses.push({ step, hash });
      throw new ReplayMissError(replayMissMessage({ step, hash }));
    }
    if (isDirectory(file)) throw new BadRecordingError(`${relPath(file)}: a folder, not a recording`);
    return readRecording(file).response as ConverseResponse;
  }

  forModel(id: string): ReplayModel {
    return new ReplayModel(this.dir, this.misses, id);
  }
}

/** The one line a replay miss is reported with. */
export const replayMissMessage = ({ step, hash }: ReplayMiss) =>
  `replay: step ${step} sent a request that was never recorded (${hash.slice(0, 12)}): its prompt or input changed since the recording; record again with --record`;

/** The 1-based line of character `position` of `text`. */
const lineAt = (text: string, position: number) => text.slice(0, position).split('\n').length;

/** Where in `text` a JSON syntax error is: the position the parser names, or the end (a truncated file). */
function syntaxErrorLine(text: string, error: Error): number {
  const position = /at position (\d+)/.exec(error.message)?.[1];
  return lineAt(text, position === undefined ? text.length : Number(position));
}

/**
 * One recording file, checked.
 * @throws BadRecordingError naming `file:line` when it is not JSON, or not a recording (the line of the first wrong field).
 */
export function readRecording(file: string): Recording {
  const text = readFileSync(file, 'utf8');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    const line = syntaxErrorLine(text, e as Error);
    throw new BadRecordingError(
      `${relPath(file)}:${line}: not JSON (${(e as Error).message}): record again with --record`,
    );
  }
  const parsed = RecordingSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const key = issue.path.filter((p) => typeof p === 'string').at(-1);
  const at = key === undefined ? -1 : text.indexOf(`"${key}"`);
  const line = at < 0 ? 1 : lineAt(text, at);
  const field = issue.path.join('.') || '(root)';
  throw new BadRecordingError(
    `${relPath(file)}:${line}: not a recording: ${field}: ${issue.message}: record again with --record`,
  );
}

const isDirectory = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;

/**
 * The recording files of `dir` (`<step>/<hash>.json`); anything else there is skipped and named
 * to `warn` (a `.DS_Store`, a stray folder), never read.
 */
export function recordingFiles(dir: string, warn: (message: string) => void): string[] {
  if (!existsSync(dir)) return [];
  const files: string[] = [];
  for (const step of readdirSync(dir).sort()) {
    const folder = join(dir, step);
    if (!isDirectory(folder)) {
      warn(`${relPath(folder)}: skipped, not a step folder of recordings`);
      continue;
    }
    for (const name of readdirSync(folder).sort()) {
      const file = join(folder, name);
      if (name.endsWith('.json') && !isDirectory(file)) files.push(file);
      else warn(`${relPath(file)}: skipped, not a recording (<hash>.json)`);
    }
  }
  return files;
}

/**
 * What a recorded run was made with (the models of its recordings), for `--compare` labels. Files
 * that are no recording, or bad ones, are named to `warn` and left out.
 */
export function recordedModels(dir: string, warn: (message: string) => void = () => {}): string[] {
  const models = new Set<string>();
  for (const file of recordingFiles(dir, warn)) {
    try {
      const { provider, model } = readRecording(file);
      models.add(`${provider}${model ? ` ${model}` : ''}`);
    } catch (e) {
      if (!(e instanceof BadRecordingError)) throw e;
      warn(e.message);
    }
  }
  return [...models].sort();
}
