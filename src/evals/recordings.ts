/**
 * Record and replay of model calls (`stepwise eval --record` / `--replay`), for any workflow and
 * provider. Recording wraps the real provider: each request and its response are kept in the
 * workflow folder, `recordings/<step>/<hash>.json`, keyed by a hash of the request (system prompt,
 * messages, tools, inference settings and, for a panel step, the model). Replay answers from those
 * files alone, offline; a request that is not among them (a changed prompt, a changed input) fails
 * the run with one line naming the step.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { StepwiseError } from '../core/errors.ts';
import {
  type ConverseOptions,
  type ConverseRequest,
  type ConverseResponse,
  ConverseResponseSchema,
  type ModelProvider,
} from '../runtime/models/port.ts';
import { readStepContext } from '../runtime/steps/prompt.ts';

/** The folder of a workflow's recordings. */
export const RECORDINGS_DIR = 'recordings';

/** A replayed request has no recording. Permanent: the prompt or the input changed since it was recorded. */
export class ReplayMissError extends StepwiseError {}

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
    return RecordingSchema.parse(JSON.parse(readFileSync(file, 'utf8'))).response as ConverseResponse;
  }

  forModel(id: string): ReplayModel {
    return new ReplayModel(this.dir, this.misses, id);
  }
}

/** The one line a replay miss is reported with. */
export const replayMissMessage = ({ step, hash }: ReplayMiss) =>
  `replay: step ${step} sent a request that was never recorded (${hash.slice(0, 12)}): its prompt or input changed since the recording; record again with --record`;

/** What a recorded run was made with (the models of its recordings), for `--compare` labels. */
export function recordedModels(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const models = new Set<string>();
  for (const step of readdirSync(dir))
    for (const file of readdirSync(join(dir, step)).filter((f) => f.endsWith('.json'))) {
      const parsed = RecordingSchema.safeParse(JSON.parse(readFileSync(join(dir, step, file), 'utf8')));
      if (parsed.success) models.add(`${parsed.data.provider}${parsed.data.model ? ` ${parsed.data.model}` : ''}`);
    }
  return [...models].sort();
}
