/**
 * Compiles a step's `consensus` option (src/runtime/steps/consensus.ts) into states, all invoking the
 * step's own Lambda:
 *
 * `<step>.consensus` (Pass: the sample plan at `$.result.consensus`, so the step's own result
 * replaces it and nothing of the vote stays in the state) → `<step>.wave-1` (inline Map, one
 * iteration per sample, `MaxConcurrency` bounded; its Task `<step>.wave-1.sample` gets the item's
 * temperature, a failed sample becomes `{ error }` and is discarded by the vote) →
 * `<step>.wave-1.tally` (Task: decided yet?) → `<step>.wave-1.decided` (Choice: yes → the step,
 * no → `<step>.wave-2`) … → `<step>` (the Task named as the step: the final vote, recorded and
 * routed like any step's result).
 */
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct } from 'constructs';
import { consensusPlan } from '../../../definitions/workflow/consensus.ts';
import type { StepDefinition } from '../../../definitions/workflow/schema.ts';
import { consensusPlanStateName } from '../../names.ts';
import type { StepwiseFunction } from '../stepwise-function.ts';

/** What the compiler shares with this module: the step payload and its retries. */
export interface StepTaskKit {
  /** Whether the state has `$.counters` (the manifest declares counters). */
  counters: boolean;
  /** The step's `StepInput` payload plus `extra` (read from `$.input`, `$.result`, `$.error`, `$.counters`). */
  payload(extra: Record<string, unknown>): sfn.TaskInput;
  /** Add the step's Retry rules (transient errors with backoff, Lambda service errors). */
  retry(task: tasks.LambdaInvoke): void;
}

export const waveStateName = (step: string, wave: number): string => `${step}.wave-${wave}`;

/** What the states of one wave are built from. */
interface Wave {
  scope: Construct;
  step: StepDefinition;
  fn: StepwiseFunction;
  kit: StepTaskKit;
  /** The wave's number, from 1. */
  number: number;
  /** How many samples the wave draws. */
  samples: number;
  /** The wave's Map state name, the prefix of its other states. */
  name: string;
}

/** The key of a wave's samples and votes under `$.result.consensus`. */
const waveKey = (number: number): string => `w${number}`;

/**
 * The states before a consensus step's Task; returns the first. `vote` is the step's Task (its
 * payload carries the votes); `onError` catches what fails outside a sample (the fallback).
 */
export function consensusStates(
  scope: Construct,
  step: StepDefinition,
  fn: StepwiseFunction,
  kit: StepTaskKit,
  vote: sfn.State & sfn.INextable,
  onError: (state: sfn.TaskStateBase | sfn.Map) => void,
): sfn.IChainable {
  const consensus = step.consensus!;
  const waves = consensusPlan(consensus);
  const plan = new sfn.Pass(scope, consensusPlanStateName(step.name), {
    comment: `Consensus of ${step.name}: ${consensus.samples} samples in ${waves.length} wave(s); the sample plan goes to $.result.consensus.`,
    result: sfn.Result.fromObject({
      waves: Object.fromEntries(waves.map((items, i) => [waveKey(i + 1), items])),
      votes: {},
    }),
    resultPath: '$.result.consensus',
  });
  let next: sfn.IChainable = vote;
  // Built from the last wave back, so each tally knows the wave after it.
  for (let i = waves.length - 1; i >= 0; i--) {
    const wave: Wave = {
      scope,
      step,
      fn,
      kit,
      number: i + 1,
      samples: waves[i]!.length,
      name: waveStateName(step.name, i + 1),
    };
    const map = waveMap(wave, sampleTask(wave));
    onError(map);
    if (i === waves.length - 1) {
      map.next(next);
    } else {
      const tally = tallyTask(wave);
      onError(tally);
      map.next(tally).next(
        new sfn.Choice(scope, `${wave.name}.decided`, {
          comment: `Decided after wave ${wave.number}: the final vote of ${step.name}; otherwise wave ${wave.number + 1}.`,
        })
          .when(sfn.Condition.booleanEquals('$.result.consensus.tally.decided', true), vote)
          .otherwise(next),
      );
    }
    next = map;
  }
  return plan.next(next);
}

/** The Task of one sample, at the item's temperature; a sample that fails is a discarded vote, not a failed step. */
function sampleTask({ scope, step, fn, kit, name }: Wave): tasks.LambdaInvoke {
  const sample = new tasks.LambdaInvoke(scope, `${name}.sample`, {
    comment: `One consensus sample of ${step.name} at the item's temperature: its route and outputs are a vote.`,
    lambdaFunction: fn,
    payloadResponseOnly: true,
    retryOnServiceExceptions: false,
    payload: kit.payload({ sample: sfn.JsonPath.objectAt('$.sample') }),
  });
  kit.retry(sample);
  sample.addCatch(
    new sfn.Pass(scope, `${name}.failed`, {
      comment: 'A sample that failed: kept as { error } with its class and message, discarded by the vote.',
      parameters: {
        sample: sfn.JsonPath.numberAt('$.sample.sample'),
        temperature: sfn.JsonPath.numberAt('$.sample.temperature'),
        error: sfn.JsonPath.objectAt('$.caught'),
      },
    }),
    { errors: [sfn.Errors.ALL], resultPath: '$.caught' },
  );
  return sample;
}

/** The inline Map that runs a wave's samples, bounded by `maxConcurrency`; its votes go under the wave's key. */
function waveMap({ scope, step, kit, number, samples, name }: Wave, sample: tasks.LambdaInvoke): sfn.Map {
  const { maxConcurrency } = step.consensus!;
  return new sfn.Map(scope, name, {
    comment: `Wave ${number} of ${step.name}'s consensus: ${samples} sample(s), at most ${maxConcurrency} at a time; the votes go to $.result.consensus.votes.${waveKey(number)}.`,
    itemsPath: `$.result.consensus.waves.${waveKey(number)}`,
    maxConcurrency,
    // The same keys as the state, so the sample's payload reads the same paths as the step's.
    itemSelector: {
      sample: sfn.JsonPath.objectAt('$$.Map.Item.Value'),
      input: sfn.JsonPath.objectAt('$.input'),
      result: sfn.JsonPath.objectAt('$.result'),
      error: sfn.JsonPath.objectAt('$.error'),
      ...(kit.counters && { counters: sfn.JsonPath.objectAt('$.counters') }),
    },
    resultPath: `$.result.consensus.votes.${waveKey(number)}`,
  }).itemProcessor(sample);
}

/** The Task after a wave (but the last) that counts the votes so far. */
function tallyTask({ scope, step, fn, kit, name }: Wave): tasks.LambdaInvoke {
  const tally = new tasks.LambdaInvoke(scope, `${name}.tally`, {
    comment: `Counts the votes of ${step.name} so far: decided when the winner can no longer be overtaken.`,
    lambdaFunction: fn,
    payloadResponseOnly: true,
    retryOnServiceExceptions: false,
    payload: kit.payload({
      consensus: { votes: sfn.JsonPath.objectAt('$.result.consensus.votes'), final: false },
    }),
    resultSelector: { decided: sfn.JsonPath.stringAt('$.decided') },
    resultPath: '$.result.consensus.tally',
  });
  kit.retry(tally);
  return tally;
}

/** The extra payload of the step's own Task when it runs the final vote. */
export const finalVotePayload = {
  consensus: { votes: sfn.JsonPath.objectAt('$.result.consensus.votes'), final: true },
};
