/**
 * Record and replay without a session: the recording model keeps each answered request under its
 * step and hash, the replay model answers the same request from there (per panel model too), and a
 * request never recorded is a miss that names the step.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  RECORDINGS_DIR,
  ReplayMissError,
  ReplayModel,
  recordedModels,
  recordingModel,
  requestHash,
} from '../../src/evals/recordings.ts';
import type { ConverseRequest, ModelProvider } from '../../src/runtime/contracts/model-port.ts';
import { contextMessage } from '../../src/runtime/contracts/prompt.ts';
import { stepInput, text } from '../runtime/steps/fixtures.ts';

const dir = join(mkdtempSync(join(tmpdir(), 'stepwise-rec-')), RECORDINGS_DIR);
afterAll(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

/** A request of step 01 as the runner builds it: the step context first. */
const request = (temperature: number): ConverseRequest => ({
  system: [{ text: 'Read the request.' }],
  messages: [contextMessage(stepInput('01-read-request'), { input: ['email'], data: [] }, undefined)],
  inferenceConfig: { maxTokens: 100, temperature },
});
const answering = (answer: string, modelId = 'model-a'): ModelProvider => ({
  name: 'bedrock',
  modelId,
  converse: async () => ({
    output: { message: { role: 'assistant', content: [text(answer)] } },
    stopReason: 'end_turn',
    usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 },
  }),
  forModel: (id) => answering(`${answer} (${id})`, id),
});

describe('recordingModel and ReplayModel', () => {
  it('replays exactly what was recorded, keyed by step and request hash', async () => {
    const recorder = recordingModel(answering('NEXT_STEP: 02-look-up'), dir);
    expect(recorder).toMatchObject({ name: 'bedrock', modelId: 'model-a' });
    const recorded = await recorder.converse(request(0));
    expect(readdirSync(join(dir, '01-read-request'))).toEqual([`${requestHash(request(0))}.json`]);

    const replay = new ReplayModel(dir);
    expect(await replay.converse(request(0))).toEqual(recorded);
    expect(replay.misses).toEqual([]);
    expect(recordedModels(dir)).toEqual(['bedrock model-a']);
  });

  it('counts a request never recorded as a miss naming its step, and keeps panel models apart', async () => {
    const replay = new ReplayModel(dir);
    await expect(replay.converse(request(0.5))).rejects.toBeInstanceOf(ReplayMissError);
    expect(replay.misses).toEqual([{ step: '01-read-request', hash: requestHash(request(0.5)) }]);

    // A panel model's answer to the same request is its own recording.
    await recordingModel(answering('x'), dir).forModel!('model-b').converse(request(0));
    const panel = replay.forModel('model-b');
    expect(panel.modelId).toBe('model-b');
    const answer = await panel.converse(request(0));
    expect(answer.output.message.content).toEqual([text('x (model-b)')]);
    expect(requestHash(request(0), 'model-b')).not.toBe(requestHash(request(0)));
  });
});
