/**
 * Studio's speed: how long an execution with 1,000 history events takes to open. Measured through
 * the real server (the two requests the execution view makes: the execution, and its workflow's
 * graph with the step statistics) and, where Chromium is installed, in the browser from navigation
 * to the rendered steps and graph.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { addStepwiseStacks } from '../../src/cdk/stepwise-app.ts';
import { startStudio } from '../../src/cli/studio/server.ts';
import { type SynthesizedApp, synthesize } from '../../src/local/cloud/synth.ts';
import { type ExecutionRecord, writeLocalExecution } from '../../src/local/records/history.ts';
import { stateDirs } from '../../src/local/records/state-dirs.ts';
import { loadProject } from '../../src/project/project.ts';
import { CHROMIUM, launchChromium } from '../support/browser.ts';
import { FIXTURE_PROJECT, FIXTURE_STATEMACHINES, fixtureEnv } from '../support/fixture-project.ts';
import { recordedExecution } from '../support/fixtures.ts';
import type { BenchRun } from './harness.ts';

// The functions passed to page.evaluate run in the page; the project is compiled without the DOM library.
declare const document: any;

/**
 * A case-desk execution (the engine's fixture project) with about `events` history events: the recorded valid run's
 * four steps (with their model requests and tool calls) repeated, ids and times renumbered.
 */
export function largeExecution(events = 1000): ExecutionRecord {
  const base = recordedExecution('case-desk-valid');
  const first = base.events.findIndex((e) => e.type === 'TaskStateEntered');
  const last = base.events.findLastIndex((e) => e.type === 'ChoiceStateExited');
  const [head, segment, tail] = [
    base.events.slice(0, first),
    base.events.slice(first, last + 1),
    base.events.slice(last + 1),
  ];
  const repeats = Math.max(1, Math.round((events - head.length - tail.length) / segment.length));
  const all: HistoryEvent[] = [...head, ...Array.from({ length: repeats }, () => segment).flat(), ...tail].map(
    (e, i) => ({
      ...e,
      id: i + 1,
      previousEventId: i,
      timestamp: new Date(base.startDate.getTime() + i * 7),
    }),
  );
  return {
    ...base,
    name: `bench-${all.length}-events`,
    executionArn: base.executionArn.replace(base.name, `bench-${all.length}-events`),
    events: all,
    stopDate: all.at(-1)!.timestamp,
  };
}

/**
 * The workflows of the engine's fixture project, which the recorded executions ran, for Studio's `workflows`: the
 * benchmarks run in the repository's project, whose examples are other workflows. Its lifecycle is left out: a
 * lifecycle stack reads its agent from the current project's folder, not from the project it is given.
 */
export async function fixtureWorkflows(): Promise<{ app: SynthesizedApp; statemachines: string }> {
  const project = { ...(await loadProject(FIXTURE_PROJECT)), lifecycles: [] };
  const config = { ...fixtureEnv('dev'), lifecycles: {} };
  const app = synthesize((a) => void addStepwiseStacks(a, config, project));
  return { app, statemachines: FIXTURE_STATEMACHINES };
}

export async function studioOpen(bench: BenchRun): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'stepwise-bench-studio-'));
  const dirs = stateDirs(root);
  const record = largeExecution(1000);
  writeLocalExecution(record, dirs.executions);
  const studio = await startStudio({ port: 0, dirs, workflows: await fixtureWorkflows() });
  const steps = record.events.filter((e) => e.type === 'TaskStateEntered').length;
  try {
    const open = () =>
      Promise.all(
        [
          fetch(`${studio.url}api/executions/${record.name}`),
          fetch(`${studio.url}api/workflows/${record.workflow}`),
        ].map((r) => r.then((res) => res.json())),
      );
    const [view, workflow] = (await open()) as [{ eventCount: number; steps: unknown[] }, { graph?: unknown }];
    if (view.eventCount !== record.events.length || view.steps.length !== steps)
      throw new Error(`the view has ${view.eventCount} events and ${view.steps.length} steps`);
    if (!workflow.graph) throw new Error(`Studio has no graph of ${record.workflow}`);
    const api = await bench.repeated({
      name: 'studio.execution.open.api',
      description: `GET the execution (${record.events.length} history events, ${steps} steps) and its workflow's graph with step statistics, through the Studio server: read, check and lay out`,
      warmupIterations: 3,
      iterations: 30,
      unit: 'opens',
      fn: async () => {
        await open();
      },
    });
    let browserMs: number | undefined;
    if (existsSync(CHROMIUM)) {
      const chromium = await launchChromium();
      try {
        const page = await chromium.context.newPage();
        let n = 0;
        const result = await bench.repeated({
          name: 'studio.execution.open.browser',
          description: `Chromium: navigate to the execution view of the ${record.events.length}-event execution until its ${steps} steps and its graph are on screen`,
          warmupIterations: 2,
          iterations: 10,
          unit: 'opens',
          fn: async () => {
            await page.goto(`${studio.url}?${n++}#/executions/${record.name}`);
            await page.waitForFunction(
              (count) =>
                document.querySelectorAll('ol.steps button').length === count &&
                document.querySelector('svg [data-state="Done"]') !== null,
              steps,
              { timeout: 30_000, polling: 'raf' },
            );
          },
        });
        browserMs = result?.p95Ms;
      } finally {
        await chromium.close();
      }
    }
    bench.figures.studio = {
      events: record.events.length,
      steps,
      apiMeanMs: api?.meanMs,
      browserP95Ms: browserMs ?? null,
    };
    bench.target(
      'studio.openExecution1000',
      `an execution with ${record.events.length} history events opens in Studio, p95 ms (${browserMs === undefined ? 'server only: no Chromium here' : 'in Chromium, navigation to rendered steps and graph'})`,
      browserMs ?? api?.p95Ms ?? null,
      { max: 1000 },
    );
  } finally {
    await studio.close();
    rmSync(root, { recursive: true, force: true });
  }
}
