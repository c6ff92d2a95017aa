import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DefinitionError, InvalidInputError } from '../../../src/core/errors.ts';
import {
  checkAgentConfig,
  listAgentConfigs,
  loadAgentConfig,
  loadLifecycle,
  parseAgentConfig,
  parseLifecycle,
} from '../../../src/definitions/lifecycle/loader.ts';
import { pathOf } from '../../../src/runtime/lifecycle/transition.ts';
import { agent, agentNames, def } from '../../runtime/lifecycle/support.ts';
import { FIXTURE_STATEMACHINES } from '../../support/fixture-project.ts';

const MINI = `name: mini
description: A small lifecycle.
version: 1.0.0
events: [agent.message_sent, member.message_sent, goal.hit, conversation.stopped, follow_up.stopped, follow_ups.exhausted]
features:
  goals: true
  followUps: { states: [working], sent: agent.message_sent, reply: member.message_sent, exhausted: follow_ups.exhausted }
initial: idle
states:
  idle:
    on:
      agent.message_sent: working
      goal.hit: done
      follow_up.stopped: { actions: [stopFollowUps] }
  active:
    on:
      goal.hit: done
      follow_up.stopped: { actions: [stopFollowUps] }
    states:
      working:
        entry: [clearFollowUpStop]
  done:
    terminal: true
    on:
      agent.message_sent: { restart: true }
`;

function definitionError(text: string): DefinitionError {
  try {
    parseLifecycle(text, 'mini.yaml');
  } catch (e) {
    if (e instanceof DefinitionError) return e;
    throw e;
  }
  throw new Error('expected a DefinitionError');
}

describe('a lifecycle on disk (the fixture member-journey)', () => {
  it('lists its leaves in document order, each with the path of its parents', () => {
    expect(def).toMatchObject({ name: 'member-journey', initial: 'idle' });
    expect(def.leaves.join(' ')).toBe(
      'idle outreach engaged cold no_show booked attended closed renewal_due goal_hit stopped',
    );
    expect(def.leaves.filter((l) => def.states[l]!.terminal)).toEqual(['goal_hit', 'stopped']);
    const paths = {
      engaged: 'active.qualification.engaged',
      renewal_due: 'active.renewal_due',
      goal_hit: 'goal_hit',
      qualification: 'active.qualification',
    };
    for (const [state, path] of Object.entries(paths)) expect(pathOf(def, state)).toBe(path);
    expect(() => pathOf(def, 'nowhere')).toThrow(InvalidInputError);
    expect(def.states.engaged!.entry).toEqual(['clearFollowUpStop']);
  });

  it('resolves each leaf’s handlers with the declaring state (child overrides parent)', () => {
    expect(def.handlers.cold!['call.booked']).toEqual({
      declaredIn: 'qualification',
      transition: { kind: 'goto', target: 'booked', actions: [] },
    });
    expect(def.handlers.engaged!['follow_up.stopped']).toEqual({
      declaredIn: 'active',
      transition: { kind: 'stay', actions: ['stopFollowUps'] },
    });
    expect(def.handlers.idle!['crm.state_set']).toEqual({
      declaredIn: null,
      transition: { kind: 'fromDetail', field: 'state', actions: [], versionFrom: 'version', timeFrom: 'crmUpdatedAt' },
    });
    expect(def.handlers.goal_hit!['member.message_sent']).toEqual({
      declaredIn: 'goal_hit',
      transition: { kind: 'restart' },
    });
    // `payment.received: null` on closed hides active's handler; a goto to self is no handler.
    expect(def.handlers.closed!['payment.received']).toBeUndefined();
    expect(def.handlers.closed!['deal.closed']).toBeUndefined();
    expect(def.handlers.active).toBeUndefined();
  });

  it('is cached per process', () => {
    expect(loadLifecycle(def.name, FIXTURE_STATEMACHINES)).toBe(def);
  });

  it('loads every agent config of the lifecycle, each checked against the statechart', () => {
    const configs = Object.fromEntries(agentNames().map((name) => [name, agent(name)]));
    expect(Object.keys(configs)).toEqual(['attend-call', 'both', 'close-big', 'either', 'hand-off-cold']);
    expect(configs['close-big']!.goal).toEqual({ event: 'deal.closed', where: { value: { gte: 10000 } } });
  });
});

describe('statechart validation', () => {
  it('accepts the minimal chart', () => {
    const mini = parseLifecycle(MINI, 'mini.yaml');
    expect(mini.leaves).toEqual(['idle', 'working', 'done']);
    expect(mini.handlers.done!['agent.message_sent']).toEqual({ declaredIn: 'done', transition: { kind: 'restart' } });
  });

  const cases: [string, string, string, RegExp][] = [
    ['bad YAML', MINI.replace('initial: idle', 'initial: [idle'), '(yaml)', /./],
    [
      'an unknown top-level key',
      MINI + 'extra: 1\n',
      'extra',
      /: extra: not a field of statechart\.yaml in stepwise \d+\.\d+\.\d+ \(a newer Stepwise\?\)$/,
    ],
    [
      'an unknown event',
      MINI.replace('agent.message_sent: working', 'agent.message_snt: working'),
      'states.idle.on.agent.message_snt',
      /unknown event "agent.message_snt" \(known: agent.message_sent, /,
    ],
    [
      'an unknown target',
      MINI.replace('agent.message_sent: working', 'agent.message_sent: nowhere'),
      'states.idle.on.agent.message_sent',
      /unknown state "nowhere"/,
    ],
    [
      'a parent as target',
      MINI.replace('agent.message_sent: working', 'agent.message_sent: active'),
      'states.idle.on.agent.message_sent',
      /"active" is a parent state; targets must be leaves/,
    ],
    [
      'a badly spelled target',
      MINI.replace('agent.message_sent: working', 'agent.message_sent: Working'),
      'states.idle.on.agent.message_sent',
      /lowercase letters, digits and underscores/,
    ],
    [
      'an unknown action',
      MINI.replace('entry: [clearFollowUpStop]', 'entry: [clearFollowUps]'),
      'states.active.states.working.entry.0',
      /Invalid option/,
    ],
    [
      'an unknown transition key',
      MINI.replace('{ actions: [stopFollowUps] }', '{ action: [stopFollowUps] }'),
      'states.idle.on.follow_up.stopped.action',
      /not a field of statechart\.yaml/,
    ],
    [
      'a transition with neither target nor actions',
      MINI.replace('{ actions: [stopFollowUps] }', '{}'),
      'states.idle.on.follow_up.stopped',
      /without a target needs actions/,
    ],
    [
      'a target and a restart',
      MINI.replace('{ restart: true }', '{ restart: true, target: idle }'),
      'states.done.on.agent.message_sent',
      /at most one of/,
    ],
    ['an unknown initial state', MINI.replace('initial: idle', 'initial: start'), 'initial', /unknown state "start"/],
    ['a parent as initial state', MINI.replace('initial: idle', 'initial: active'), 'initial', /parent state/],
    ['a terminal initial state', MINI.replace('initial: idle', 'initial: done'), 'initial', /cannot be terminal/],
    [
      'entry actions on the initial state',
      MINI.replace('  idle:\n', '  idle:\n    entry: [stopFollowUps]\n'),
      'states.idle.entry',
      /no entry actions/,
    ],
    [
      'a duplicate state name',
      MINI.replace('      working:\n', '      idle: {}\n      working:\n'),
      'states.active.states.idle',
      /duplicate state name "idle" \(also at states.idle\)/,
    ],
    [
      'a parent without children',
      MINI.replace('      working:\n        entry: [clearFollowUpStop]\n', '      {}\n'),
      'states.active.states',
      /at least one child/,
    ],
    [
      'a terminal parent',
      MINI.replace('    states:\n      working:', '    terminal: true\n    states:\n      working:'),
      'states.active.terminal',
      /only leaves can be terminal/,
    ],
    [
      'a restart outside a terminal state',
      MINI.replace(
        'follow_up.stopped: { actions: [stopFollowUps] }\n  active',
        'follow_up.stopped: { actions: [stopFollowUps] }\n      member.message_sent: { restart: true }\n  active',
      ),
      'states.idle.on.member.message_sent',
      /only terminal states restart/,
    ],
    [
      'a restart the initial state cannot take',
      MINI + '      member.message_sent: { restart: true }\n',
      'states.done.on.member.message_sent',
      /initial state "idle" to handle member.message_sent/,
    ],
    [
      'a non-terminal leaf that ignores goal.hit',
      MINI.replace(
        '      goal.hit: done\n      follow_up.stopped: { actions: [stopFollowUps] }\n    states',
        '      follow_up.stopped: { actions: [stopFollowUps] }\n    states',
      ),
      'states.active.states.working',
      /must handle goal.hit/,
    ],
    [
      'goal.hit that does not end the conversation',
      MINI.replace(
        '      goal.hit: done\n      follow_up.stopped: { actions: [stopFollowUps] }\n  active',
        '      goal.hit: working\n      follow_up.stopped: { actions: [stopFollowUps] }\n  active',
      ),
      'states.idle',
      /goal.hit must go to a terminal state/,
    ],
    [
      'a leaf that ignores follow_up.stopped',
      MINI.replace('      follow_up.stopped: { actions: [stopFollowUps] }\n  active', '  active'),
      'states.idle',
      /must handle follow_up.stopped/,
    ],
    [
      'a machine-level unknown event',
      MINI.replace('states:\n  idle:', 'on:\n  crm.set: { targetFromDetail: state }\nstates:\n  idle:'),
      'on.crm.set',
      /unknown event/,
    ],
  ];
  for (const [what, text, field, message] of cases) {
    it(`rejects ${what}`, () => {
      const e = definitionError(text);
      expect(e.file).toBe('mini.yaml');
      expect(e.field).toBe(field);
      expect(e.message).toMatch(message);
    });
  }
});

describe('vocabulary, entity and features', () => {
  const ORDER = `name: orders
description: Orders.
version: 1.0.0
initial: new
states:
  new:
    on:
      order.placed: placed
  placed:
    on:
      order.cancelled: cancelled
  cancelled:
    terminal: true
`;

  it('derives the vocabulary from the transitions, and the entity and sources from defaults, when the chart declares none', () => {
    const orders = parseLifecycle(ORDER, 'orders.yaml');
    expect(orders.events).toEqual(['order.placed', 'order.cancelled']);
    expect(orders.entity).toEqual({ key: 'entityId', name: 'entity', plural: 'entities' });
    expect(orders.sources).toEqual(['stepwise.replay']);
    expect(orders.features).toEqual({ goals: false, crmSync: false });
    const keyed = parseLifecycle(
      ORDER.replace('initial: new', 'entity: { key: orderId }\nsources: [shop.orders]\ninitial: new'),
      'orders.yaml',
    );
    expect(keyed.entity).toEqual({ key: 'orderId', name: 'order', plural: 'orders' });
    expect(keyed.sources).toEqual(['shop.orders', 'stepwise.replay']);
  });

  it('adds the scheduler as a source with timers, and the events a feature raises or applies to the vocabulary', () => {
    expect(def.sources).toContain('stepwise.scheduler');
    const mini = parseLifecycle(MINI.replace(/^events: .*\n/m, ''), 'mini.yaml');
    expect(mini.events).toEqual(
      expect.arrayContaining([
        'goal.hit',
        'conversation.stopped',
        'follow_up.stopped',
        'member.message_sent',
        'follow_ups.exhausted',
      ]),
    );
    expect(mini.sources).toEqual(['stepwise.replay', 'stepwise.scheduler']);
  });

  const cases: [string, string, string, string, RegExp][] = [
    [
      'context actions without the followUps feature',
      ORDER,
      '      order.placed: placed',
      '      order.placed: { target: placed, actions: [stopFollowUps] }',
      /context actions need the followUps feature/,
    ],
    [
      'a feature state that is no leaf',
      ORDER,
      'initial: new',
      'features: { notify: { states: [nowhere] } }\ninitial: new',
      /unknown state "nowhere"/,
    ],
    [
      'a feature event outside the declared vocabulary',
      ORDER,
      'initial: new',
      'events: [order.placed, order.cancelled]\nfeatures: { renewals: { state: placed, event: order.renewed } }\ninitial: new',
      /unknown event "order.renewed"/,
    ],
    [
      'a report naming an unknown event',
      ORDER,
      'initial: new',
      'reports: { paid: { label: paid, count: order.paid } }\ninitial: new',
      /unknown event "order.paid"/,
    ],
    [
      'a report of two forms',
      ORDER,
      'initial: new',
      'reports: { x: { label: x, count: order.placed, rate: order.cancelled, of: order.placed } }\ninitial: new',
      /a report is exactly one of/,
    ],
    [
      'a rate without what it is of',
      ORDER,
      'initial: new',
      'reports: { x: { label: x, rate: order.cancelled } }\ninitial: new',
      /a report is exactly one of/,
    ],
    ['an entity key the envelope owns', ORDER, 'initial: new', 'entity: { key: eventId }\ninitial: new', /eventId/],
    [
      "the lifecycle's own source",
      ORDER,
      'initial: new',
      'sources: [stepwise.lifecycle]\ninitial: new',
      /stepwise.lifecycle is what the lifecycle publishes/,
    ],
    [
      'an event type that is no dotted word',
      ORDER,
      'initial: new',
      'events: [Order Placed]\ninitial: new',
      /dotted lowercase words/,
    ],
    [
      'versionFrom without targetFromDetail',
      ORDER,
      '      order.placed: placed',
      '      order.placed: { target: placed, versionFrom: version }',
      /versionFrom and timeFrom belong beside targetFromDetail/,
    ],
  ];
  for (const [what, chart, from, to, message] of cases) {
    it(`rejects ${what}, naming the file and field in one line`, () => {
      expect(() => parseLifecycle(chart.replace(from, to), 'orders.yaml')).toThrow(message);
      expect(() => parseLifecycle(chart.replace(from, to), 'orders.yaml')).toThrow(/^orders\.yaml: [^\n]+$/);
    });
  }

  it('refuses an agent config that uses a feature its lifecycle does not enable', () => {
    const orders = parseLifecycle(ORDER, 'orders.yaml');
    const check = (value: unknown) => () =>
      checkAgentConfig(parseAgentConfig(value, 'agents/x.json'), orders, 'agents/x.json');
    expect(check({ goal: { event: 'order.placed' } })).toThrow(
      'agents/x.json: goal: orders does not enable goals (features.goals in orders.yaml)',
    );
    expect(check({ goal: null, stopFollowUpsOn: [{ event: 'order.placed' }] })).toThrow(
      /stopFollowUpsOn: orders does not enable followUps/,
    );
    expect(check({ goal: null, timers: { renewalAfterDays: 30 } })).toThrow(
      /timers\.renewalAfterDays: orders does not enable renewals/,
    );
    expect(check({ goal: null })).not.toThrow();
  });
});

describe('loading from disk', () => {
  const root = mkdtempSync(join(tmpdir(), 'stepwise-lifecycle-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('requires the name to match the folder', () => {
    mkdirSync(join(root, 'other'));
    writeFileSync(join(root, 'other', 'statechart.yaml'), MINI);
    expect(() => loadLifecycle('other', root)).toThrow(/must match the folder name "other"/);
    expect(() => loadLifecycle('absent', root)).toThrow(/no statechart for lifecycle "absent"/);
  });

  it('loads agent configs and names the file on errors', () => {
    mkdirSync(join(root, 'mini', 'agents'), { recursive: true });
    writeFileSync(join(root, 'mini', 'statechart.yaml'), MINI);
    writeFileSync(join(root, 'mini', 'agents', 'broken.json'), '{ "goal": ');
    writeFileSync(
      join(root, 'mini', 'agents', 'typo.json'),
      '{ "goal": { "event": "call.booked" }, "stopFollowupsOn": [] }',
    );
    expect(loadLifecycle('mini', root).name).toBe('mini');
    expect(listAgentConfigs('mini', root)).toEqual(['broken', 'typo']);
    expect(() => loadAgentConfig('broken', 'mini', root)).toThrow(/broken\.json: \(json\): /);
    expect(() => loadAgentConfig('typo', 'mini', root)).toThrow(
      /typo\.json: stopFollowupsOn: not a field of agent config in stepwise /,
    );
    expect(() => loadAgentConfig('ghost', 'mini', root)).toThrow(/unknown agent "ghost" \(known: broken, typo\)/);
  });
});

describe('agent config validation', () => {
  const error = (value: unknown) => {
    try {
      checkAgentConfig(parseAgentConfig(value, 'agent acme'), def, 'agent acme');
    } catch (e) {
      if (e instanceof DefinitionError) return `${e.field}: ${e.message.slice(`${e.file}: ${e.field}: `.length)}`;
      throw e;
    }
    return 'valid';
  };

  it('defaults to no goal and no stop conditions', () => {
    expect(parseAgentConfig({}, 'agent acme')).toEqual({
      goal: null,
      stopConversationOn: [],
      sparky: false,
      timers: { followUpHours: [], coldAfterDays: null, renewalAfterDays: null },
      stopFollowUpsOn: [],
      reports: {},
    });
  });

  it('reports mistakes at their own path, also deep inside nested conditions', () => {
    expect(error({ goal: { event: 'call.bookd' } })).toMatch(
      /^goal\.event: unknown event "call.bookd" \(known: agent.message_sent, /,
    );
    expect(error({ goal: { anyOf: [{ event: 'call.booked' }, { allOf: [{ event: 'deal.closd' }] }] } })).toMatch(
      /^goal\.anyOf\.1\.allOf\.0\.event: unknown event "deal.closd"/,
    );
    expect(error({ goal: { event: 'goal.hit' } })).toMatch(
      /^goal\.event: goal.hit and follow_up.stopped are raised by conditions/,
    );
    expect(error({ stopFollowUpsOn: [{ event: 'follow_up.stopped' }] })).toMatch(/^stopFollowUpsOn\.0\.event: /);
    expect(error({ goal: { event: 'call.booked', anyOf: [{ event: 'deal.closed' }] } })).toBe(
      'goal: a condition is exactly one of { event?, where?, state?, sparky? }, { anyOf: [...] }, { allOf: [...] }',
    );
    expect(error({ goal: {} })).toMatch(/^goal: a condition is exactly one of/);
    expect(error({ goal: { anyOf: [] } })).toMatch(/^goal\.anyOf: Too small/);
    // The agent's own reports name the lifecycle's events and states like the statechart's.
    expect(error({ reports: { shows: { label: 'shows', rate: 'call.attendd', of: 'call.booked' } } })).toMatch(
      /^reports\.shows\.rate: unknown event/,
    );
    expect(error({ reports: { cold: { label: 'cold', event: 'member.message_sent', in: 'frozen' } } })).toMatch(
      /^reports\.cold\.in: "frozen" is not a state/,
    );
    expect(error({ goal: { allOf: [{ event: 'deal.closed' }], where: { value: { gt: 1 } } } })).toBe(
      'goal.where: `where` belongs beside `event`',
    );
    expect(error({ goal: { event: 'deal.closed', where: { value: {} } } })).toBe(
      'goal.where.value: name at least one of eq, gt, gte, lt, lte, contains',
    );
    expect(error({ goal: { event: 'deal.closed', where: { value: { gte: '10000' } } } })).toMatch(
      /^goal\.where\.value\.gte: Invalid input: expected number/,
    );
    expect(error({ goal: { event: 'deal.closed', where: { value: { between: [1, 2] } } } })).toMatch(
      /^goal\.where\.value\.between: not a field of agent config in stepwise /,
    );
    expect(error({ goal: { event: 'deal.closed' }, stopFollowUpsOn: { event: 'link.clicked' } })).toMatch(
      /^stopFollowUpsOn: Invalid input: expected array/,
    );
  });
});
