/**
 * Shared by the lifecycle tests: the engine's fixture lifecycle (member-journey of test/fixtures/project, loaded by
 * path), its agents, and an entity scripted through `applyEvent` on any lifecycle.
 */
import type { AgentConfig } from '../../../src/definitions/lifecycle/agent-config.ts';
import { listAgentConfigs, loadAgentConfig, loadLifecycle } from '../../../src/definitions/lifecycle/loader.ts';
import type {
  EntitySnapshot,
  LifecycleDefinition,
  LifecycleEvent,
  LoggedEvent,
} from '../../../src/definitions/lifecycle/schema.ts';
import { applyEvent, initialSnapshot } from '../../../src/runtime/lifecycle/transition.ts';
import { FIXTURE_STATEMACHINES } from '../../support/fixture-project.ts';

/** The fixture lifecycle's name. */
export const LIFECYCLE = 'member-journey';

export const def = loadLifecycle(LIFECYCLE, FIXTURE_STATEMACHINES);

/** One of the fixture lifecycle's agents (`statemachines/member-journey/agents/<name>.json`). */
export const agent = (name: string): AgentConfig => loadAgentConfig(name, LIFECYCLE, FIXTURE_STATEMACHINES);

/** Every agent of the fixture lifecycle, by name. */
export const agentNames = (): string[] => listAgentConfigs(LIFECYCLE, FIXTURE_STATEMACHINES);

export const NO_GOAL: AgentConfig = { goal: null, stopFollowUpsOn: [] };

const T0 = Date.parse('2025-01-06T09:00:00Z');
const HOUR = 3_600_000;

/**
 * An entity of `lifecycle` driven through `applyEvent` the way the event store will: each call appends the logged
 * events and keeps the snapshot. Event n gets id `<entity>-e<n>` and time T0 + n hours unless `at` is given.
 */
export function scriptedEntity(
  lifecycle: LifecycleDefinition,
  config: AgentConfig,
  entityId: string,
  start: EntitySnapshot = initialSnapshot(lifecycle),
) {
  let snapshot = start;
  const log: LoggedEvent[] = [];
  let n = 0;
  return {
    send(type: string, detail?: Record<string, unknown>, at?: string): LoggedEvent[] {
      n += 1;
      const event: LifecycleEvent = {
        id: `${entityId}-e${n}`,
        entityId,
        type,
        time: at ?? new Date(T0 + n * HOUR).toISOString(),
        ...(detail && { detail }),
      };
      const r = applyEvent(lifecycle, snapshot, event, config);
      snapshot = r.snapshot;
      log.push(...r.events);
      return r.events;
    },
    get snapshot(): EntitySnapshot {
      return snapshot;
    },
    log,
    /** `type` of every logged event, for sequence assertions. */
    types: () => log.map((e) => e.type),
  };
}

/** A member of the fixture lifecycle, scripted (`scriptedEntity`). */
export const scriptedMember = (config: AgentConfig, entityId = 'member-1', start?: EntitySnapshot) =>
  scriptedEntity(def, config, entityId, start);
