/** Figures of one execution as its header states them: how long it ran and how many steps it took. */

interface Run {
  startDate: string;
  stopDate?: string;
  /** A fork: the trail position it re-ran from (the steps before it are its parent's). */
  parent?: { index: number };
}

interface Step {
  index: number;
  kind: string;
  enteredAt: string;
}

/**
 * How long the execution ran, in seconds, or nothing while it runs. A fork keeps its parent's
 * events before the fork point, so it is measured from the step it re-ran, not its parent's start.
 */
export function runSeconds(record: Run, steps: Step[]): number | undefined {
  if (!record.stopDate) return undefined;
  const forkedAt = record.parent && steps.find((s) => s.index === record.parent!.index)?.enteredAt;
  return (Date.parse(record.stopDate) - Date.parse(forkedAt ?? record.startDate)) / 1000;
}

/** `4 steps`, or `4 steps and 1 pause`: every row of the steps list is counted. */
export function stepsText(steps: Pick<Step, 'kind'>[]): string {
  const pauses = steps.filter((s) => s.kind === 'pause').length;
  const count = steps.length - pauses;
  const text = `${count} ${count === 1 ? 'step' : 'steps'}`;
  return pauses ? `${text} and ${pauses} ${pauses === 1 ? 'pause' : 'pauses'}` : text;
}

interface NodeStats {
  runs: number;
  meanDurationMs: number;
  inputTokens: number;
  outputTokens: number;
}

/**
 * The figures of the local executions a graph node shows under its name. In one execution's
 * graph they are still every run's, and say so.
 */
export function nodeFiguresText(s: NodeStats, inOneExecution: boolean): string {
  const runs = inOneExecution ? `all ${s.runs} runs` : `${s.runs} runs`;
  return `${runs} · ${Math.round(s.meanDurationMs)} ms · ${s.inputTokens + s.outputTokens} tok`;
}

/** The legend's words for those figures in one execution's graph. */
export const ALL_RUNS_NOTE = 'Figures under a step: means over all local runs, not this one (its own are in Steps).';
