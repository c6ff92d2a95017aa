/**
 * What the turn pipeline's code steps read from the execution state: the session step 01 loaded,
 * the user message, and what earlier steps of this turn produced (each under its own `data` key).
 */
import type { StepInput, WorkflowDefinition } from 'stepwise';
import { type Agent, agentDir, loadAgent, type ProfileField, type ProfileMigration } from './agent.ts';
import type { Navigation, Retrieval, RuleSelection, TurnContext } from './pipeline.ts';
import { type Session, SessionSchema } from './session.ts';

export interface Turn {
  agent: Agent;
  session: Session;
  message: string;
  context: TurnContext;
  retrieval?: Retrieval;
  navigation?: Navigation;
  selection?: RuleSelection;
  /** Session variables with this turn's tool outputs. */
  variables: Record<string, unknown>;
  data: Record<string, unknown>;
}

/** Read the turn from a step's input (the session is re-validated: it crossed the state). */
export function readTurn(def: WorkflowDefinition, input: StepInput): Turn {
  const data = input.previous.data;
  const session = SessionSchema.parse(data.session);
  return {
    agent: loadAgent(agentDir(def.dir), def.manifest.tools),
    session,
    message: String(input.input.message),
    context: {
      entities: (data.entities as Record<string, unknown> | undefined) ?? {},
      detectedIntent:
        typeof data.detectedIntent === 'string' && data.detectedIntent !== '' ? data.detectedIntent : null,
      intentConfidence: typeof data.intentConfidence === 'number' ? data.intentConfidence : 0,
      isAmbiguous: data.isAmbiguous === true,
      ...(typeof data.ambiguityReason === 'string' && { ambiguityReason: data.ambiguityReason }),
    },
    retrieval: data.retrieval as Retrieval | undefined,
    navigation: data.navigation as Navigation | undefined,
    selection: data.selection as RuleSelection | undefined,
    variables: (data.variables as Record<string, unknown> | undefined) ?? session.variables,
    data,
  };
}

/** Profile fields the turn's entities fill (first extraction stage), typed as their definitions say. */
export function profileUpdate(
  fields: readonly ProfileField[],
  entities: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const value = entities[f.field_name];
    if (value === undefined || value === null || value === '') continue;
    if (f.field_type === 'number' && Number.isFinite(Number(value))) out[f.field_name] = Number(value);
    else if (f.field_type === 'boolean') out[f.field_name] = value === true || value === 'true';
    else if (f.field_type === 'string') out[f.field_name] = String(value);
  }
  return out;
}

/** What migrating a stored profile did (recorded in the load step's output). */
export interface ProfileMigrated {
  from: number;
  to: number;
  renamed: string[];
  dropped: string[];
}

/**
 * Bring a stored profile of schema version `from` to `to` with the migrations in between (each
 * renames and drops fields). A profile already at `to`, or newer (the agent was rolled back), is
 * left as it is: its fields are kept, never guessed back.
 */
export function migrateProfile(
  profile: Record<string, unknown>,
  from: number,
  to: number,
  migrations: readonly ProfileMigration[],
): { profile: Record<string, unknown>; migrated?: ProfileMigrated } {
  if (from >= to) return { profile };
  const out = { ...profile };
  const renamed: string[] = [];
  const dropped: string[] = [];
  for (const m of migrations.filter((x) => x.to > from && x.to <= to).sort((a, b) => a.to - b.to)) {
    for (const [old, name] of Object.entries(m.rename))
      if (Object.hasOwn(out, old)) {
        out[name] = out[old];
        delete out[old];
        renamed.push(`${old}→${name}`);
      }
    for (const field of m.drop)
      if (Object.hasOwn(out, field)) {
        delete out[field];
        dropped.push(field);
      }
  }
  return { profile: out, migrated: { from, to, renamed, dropped } };
}
