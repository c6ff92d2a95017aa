/**
 * The plan of a consensus step (`consensus:` in a step's frontmatter): its waves of samples and
 * their temperatures, the values the vote may take, and the checks a consensus step must pass.
 * The compiler lays the waves out as Map states; the vote itself is src/runtime/steps/consensus.ts.
 */
import { DefinitionError } from '../../core/errors.ts';
import type { Consensus, StepDefinition, WorkflowDefinition } from './schema.ts';

/** One Map item: which sample, at which temperature. */
export interface SampleItem {
  sample: number;
  temperature: number;
}

/** Samples per wave: the declared `waves`, or a majority first and then the rest. */
export function waveSizes(consensus: Consensus): number[] {
  if (consensus.waves) return consensus.waves;
  const majority = Math.floor(consensus.samples / 2) + 1;
  return majority === consensus.samples ? [majority] : [majority, consensus.samples - majority];
}

/** The Map items of each wave: samples numbered from 1, temperatures in order (repeated when fewer). */
export function consensusPlan(consensus: Consensus): SampleItem[][] {
  let sample = 0;
  return waveSizes(consensus).map((size) =>
    Array.from({ length: size }, () => {
      const temperature = consensus.temperatures[sample % consensus.temperatures.length]!;
      return { sample: ++sample, temperature };
    }),
  );
}

/** The allowed values of the voted output: `tools` is the manifest's tools. */
export function consensusChoices(def: WorkflowDefinition, consensus: Consensus): readonly string[] | undefined {
  return consensus.choices === 'tools' ? def.manifest.tools : consensus.choices;
}

/**
 * A consensus step is an LLM step whose voted output is declared and whose waves add up.
 * @throws DefinitionError naming `consensus.<field>` of the step file.
 */
export function validateConsensus(step: StepDefinition): void {
  const c = step.consensus;
  if (!c) return;
  if (step.kind !== 'llm')
    throw new DefinitionError(
      step.file,
      'consensus',
      'only LLM steps are sampled (a code step decides the same way every time)',
    );
  if (c.vote !== undefined && !step.outputs[c.vote])
    throw new DefinitionError(
      step.file,
      'consensus.vote',
      `"${c.vote}" is not a declared output (${Object.keys(step.outputs).join(', ') || 'none'})`,
    );
  if (c.choices !== undefined && c.vote === undefined)
    throw new DefinitionError(step.file, 'consensus.choices', 'choices constrain the voted output: set vote too');
  const total = waveSizes(c).reduce((a, b) => a + b, 0);
  if (total !== c.samples)
    throw new DefinitionError(
      step.file,
      'consensus.waves',
      `the waves take ${total} samples, not samples: ${c.samples}`,
    );
}

/**
 * Every sample runs the step, so a sampled step may not call a tool with side effects (it would
 * act once per sample); read-only tools are fine.
 * @throws DefinitionError naming the step's `tools` entry.
 */
export function checkConsensusTools(step: StepDefinition, sideEffects: (tool: string) => boolean): void {
  if (!step.consensus) return;
  step.tools.forEach((tool, i) => {
    if (sideEffects(tool))
      throw new DefinitionError(
        step.file,
        `tools.${i}`,
        `"${tool}" has side effects: a consensus step runs once per sample (give the tool to a later step)`,
      );
  });
}
