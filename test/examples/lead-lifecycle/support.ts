/** Shared by the lead lifecycle example's tests: its definition, its agents and a scripted lead. */
import type { AgentConfig } from '../../../src/definitions/lifecycle/agent-config.ts';
import { loadAgentConfig, loadLifecycle } from '../../../src/definitions/lifecycle/loader.ts';
import type { EntitySnapshot } from '../../../src/definitions/lifecycle/schema.ts';
import { scriptedEntity } from '../../runtime/lifecycle/support.ts';

export { NO_GOAL } from '../../runtime/lifecycle/support.ts';

export const LEAD = 'lead-lifecycle';

export const def = loadLifecycle(LEAD);

/** One of the example's shipped agents (`statemachines/lead-lifecycle/agents/<name>.json`). */
export const agent = (name: string): AgentConfig => loadAgentConfig(name, LEAD);

/** A lead driven through `applyEvent` (`scriptedEntity`): event n is `<lead>-e<n>`. */
export const scriptedLead = (config: AgentConfig, entityId = 'lead-1', start?: EntitySnapshot) =>
  scriptedEntity(def, config, entityId, start);
