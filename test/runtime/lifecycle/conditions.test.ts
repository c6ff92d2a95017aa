import { describe, expect, it } from 'vitest';
import {
  AgentConfigSchema,
  type Condition,
  ConditionSchema,
  type EventCondition,
} from '../../../src/definitions/lifecycle/agent-config.ts';
import {
  asNumber,
  conditionMatches,
  evaluateAgentConfig,
  eventMatches,
} from '../../../src/runtime/lifecycle/conditions.ts';

const on = (type: string, detail?: Record<string, unknown>) => ({ type, ...(detail && { detail }) });
const deal = (where: EventCondition['where']): EventCondition => ({ event: 'deal.closed', where });

describe('eventMatches', () => {
  it('matches on the event type alone', () => {
    expect(eventMatches({ event: 'call.booked' }, on('call.booked'))).toBe(true);
    expect(eventMatches({ event: 'call.booked' }, on('call.missed'))).toBe(false);
  });

  it('eq is strict equality on a detail key', () => {
    expect(eventMatches(deal({ currency: { eq: 'GBP' } }), on('deal.closed', { currency: 'GBP' }))).toBe(true);
    expect(eventMatches(deal({ currency: { eq: 'GBP' } }), on('deal.closed', { currency: 'gbp' }))).toBe(false);
    expect(eventMatches(deal({ value: { eq: 10 } }), on('deal.closed', { value: '10' }))).toBe(false);
    expect(eventMatches(deal({ won: { eq: true } }), on('deal.closed', { won: true }))).toBe(true);
    expect(eventMatches(deal({ owner: { eq: null } }), on('deal.closed', { owner: null }))).toBe(true);
    expect(eventMatches(deal({ owner: { eq: null } }), on('deal.closed', {}))).toBe(false);
  });

  it('gt, gte, lt, lte compare numbers, numeric strings included', () => {
    const at = (value: unknown) => on('deal.closed', { value });
    expect(eventMatches(deal({ value: { gt: 10000 } }), at(10000))).toBe(false);
    expect(eventMatches(deal({ value: { gt: 10000 } }), at(10001))).toBe(true);
    expect(eventMatches(deal({ value: { gte: 10000 } }), at(10000))).toBe(true);
    expect(eventMatches(deal({ value: { gte: 10000 } }), at('10000.5'))).toBe(true);
    expect(eventMatches(deal({ value: { gte: 10000 } }), at(9999.99))).toBe(false);
    expect(eventMatches(deal({ value: { lt: 100 } }), at(99))).toBe(true);
    expect(eventMatches(deal({ value: { lt: 100 } }), at(100))).toBe(false);
    expect(eventMatches(deal({ value: { lte: 100 } }), at(100))).toBe(true);
    expect(eventMatches(deal({ value: { lte: 100 } }), at(101))).toBe(false);
    for (const notANumber of ['lots', '', '  ', null, true, [5], { v: 5 }])
      expect(eventMatches(deal({ value: { lte: 100 } }), at(notANumber))).toBe(false);
  });

  it('several operators on a field must all hold (a range)', () => {
    const band = deal({ value: { gte: 1000, lt: 5000 } });
    expect(eventMatches(band, on('deal.closed', { value: 999 }))).toBe(false);
    expect(eventMatches(band, on('deal.closed', { value: 1000 }))).toBe(true);
    expect(eventMatches(band, on('deal.closed', { value: 5000 }))).toBe(false);
  });

  it('contains: case-insensitive phrase match on strings, membership on arrays', () => {
    const phrase: EventCondition = { event: 'member.message_sent', where: { text: { contains: 'Call Me' } } };
    expect(eventMatches(phrase, on('member.message_sent', { text: 'ok, please call me at 5' }))).toBe(true);
    expect(eventMatches(phrase, on('member.message_sent', { text: 'I will call you' }))).toBe(false);
    expect(eventMatches(phrase, on('member.message_sent', {}))).toBe(false);
    const tagged: EventCondition = { event: 'callback.received', where: { tags: { contains: 'form' } } };
    expect(eventMatches(tagged, on('callback.received', { tags: ['web', 'form'] }))).toBe(true);
    expect(eventMatches(tagged, on('callback.received', { tags: ['web', 'Form'] }))).toBe(false);
    expect(
      eventMatches(
        { event: 'callback.received', where: { codes: { contains: 7 } } },
        on('callback.received', { codes: [1, 7] }),
      ),
    ).toBe(true);
    expect(
      eventMatches(
        { event: 'callback.received', where: { codes: { contains: 7 } } },
        on('callback.received', { codes: '1,7' }),
      ),
    ).toBe(false);
  });

  it('every where field must hold, and a missing field never matches', () => {
    const c = deal({ value: { gte: 10 }, currency: { eq: 'EUR' } });
    expect(eventMatches(c, on('deal.closed', { value: 20, currency: 'EUR' }))).toBe(true);
    expect(eventMatches(c, on('deal.closed', { value: 20, currency: 'USD' }))).toBe(false);
    expect(eventMatches(c, on('deal.closed', { value: 20 }))).toBe(false);
    expect(eventMatches(c, on('deal.closed'))).toBe(false);
  });
});

describe('conditionMatches', () => {
  const bookedOrBig: Condition = { anyOf: [{ event: 'call.booked' }, deal({ value: { gte: 10000 } })] };

  it('anyOf holds when any member matches the current event', () => {
    expect(conditionMatches(bookedOrBig, on('call.booked')).holds).toBe(true);
    expect(conditionMatches(bookedOrBig, on('deal.closed', { value: 20000 })).holds).toBe(true);
    expect(conditionMatches(bookedOrBig, on('deal.closed', { value: 200 })).holds).toBe(false);
    expect(conditionMatches(bookedOrBig, on('link.clicked')).holds).toBe(false);
  });

  it('anyOf does not remember: an earlier match does not make a later event hold', () => {
    const first = conditionMatches(bookedOrBig, on('call.booked'));
    expect(conditionMatches(bookedOrBig, on('link.clicked'), first.matched).holds).toBe(false);
  });

  it('allOf holds once every member has matched some event, in any order', () => {
    const both: Condition = { allOf: [{ event: 'link.clicked' }, { event: 'call.booked' }] };
    const a = conditionMatches(both, on('call.booked'));
    expect(a).toEqual({ holds: false, matched: ['c.1'] });
    const b = conditionMatches(both, on('call.missed'), a.matched);
    expect(b).toEqual({ holds: false, matched: ['c.1'] });
    expect(conditionMatches(both, on('link.clicked'), b.matched)).toEqual({ holds: true, matched: ['c.1', 'c.0'] });
    // Without the earlier progress the same event is not enough.
    expect(conditionMatches(both, on('link.clicked')).holds).toBe(false);
  });

  it('allOf holds at once when one event satisfies every member', () => {
    const c: Condition = { allOf: [deal({ value: { gte: 100 } }), deal({ currency: { eq: 'EUR' } })] };
    expect(conditionMatches(c, on('deal.closed', { value: 150, currency: 'EUR' })).holds).toBe(true);
  });

  it('nests: allOf of anyOf, anyOf of allOf', () => {
    const reached: Condition = { anyOf: [{ event: 'callback.received' }, { event: 'member.message_sent' }] };
    const allOfAny: Condition = { allOf: [reached, { event: 'call.booked' }] };
    const x = conditionMatches(allOfAny, on('member.message_sent'));
    expect(x).toEqual({ holds: false, matched: ['c.0'] });
    expect(conditionMatches(allOfAny, on('call.booked'), x.matched).holds).toBe(true);

    const anyOfAll: Condition = {
      anyOf: [{ allOf: [{ event: 'link.clicked' }, { event: 'callback.received' }] }, { event: 'deal.closed' }],
    };
    const y = conditionMatches(anyOfAll, on('link.clicked'));
    expect(y).toEqual({ holds: false, matched: ['c.0.0'] });
    expect(conditionMatches(anyOfAll, on('callback.received'), y.matched).holds).toBe(true);
    expect(conditionMatches(anyOfAll, on('deal.closed')).holds).toBe(true);
  });

  it('does not mutate the progress it is given', () => {
    const matched = Object.freeze(['c.0']) as readonly string[];
    conditionMatches({ allOf: [{ event: 'link.clicked' }, { event: 'call.booked' }] }, on('call.booked'), matched);
    expect(matched).toEqual(['c.0']);
  });
});

describe('evaluateAgentConfig', () => {
  const config = AgentConfigSchema.parse({
    goal: { allOf: [{ event: 'link.clicked' }, { event: 'call.booked' }] },
    stopFollowUpsOn: [
      { event: 'callback.received' },
      { allOf: [{ event: 'link.clicked' }, { event: 'member.message_sent' }] },
    ],
  });

  it('keeps goal and stop progress apart, under their own paths', () => {
    const r = evaluateAgentConfig(config, on('link.clicked'), []);
    expect(r).toEqual({
      goalMet: false,
      stopMatched: false,
      conversationStopMatched: false,
      matched: ['goal.0', 'stopFollowUpsOn.1.0'],
    });
    const s = evaluateAgentConfig(config, on('member.message_sent'), r.matched);
    expect(s).toEqual({
      goalMet: false,
      stopMatched: true,
      conversationStopMatched: false,
      matched: ['goal.0', 'stopFollowUpsOn.1.0', 'stopFollowUpsOn.1.1'],
    });
    expect(evaluateAgentConfig(config, on('call.booked'), s.matched).goalMet).toBe(true);
  });

  it('any stop condition is enough', () => {
    expect(evaluateAgentConfig(config, on('callback.received'), []).stopMatched).toBe(true);
  });

  it('no goal never meets a goal', () => {
    const none = AgentConfigSchema.parse({ goal: null });
    expect(evaluateAgentConfig(none, on('call.booked'), [])).toEqual({
      goalMet: false,
      stopMatched: false,
      conversationStopMatched: false,
      matched: [],
    });
  });
});

describe('ConditionSchema', () => {
  it('normalises every form to exactly its keys', () => {
    expect(ConditionSchema.parse({ event: 'deal.closed' })).toEqual({ event: 'deal.closed' });
    expect(ConditionSchema.parse({ anyOf: [{ event: 'deal.closed', where: { value: { gt: 1 } } }] })).toEqual({
      anyOf: [{ event: 'deal.closed', where: { value: { gt: 1 } } }],
    });
  });
});

describe('numbers are decimal only', () => {
  const atLeast10k = deal({ value: { gte: 10000 } });
  const at = (value: unknown) => on('deal.closed', { value });

  it('reads plain decimal strings and finite numbers', () => {
    for (const ok of ['10000', '+10000', '10000.0', '12000.50', '010000', 10000, 1e5])
      expect(eventMatches(atLeast10k, at(ok)), String(ok)).toBe(true);
    expect(asNumber('-1.5')).toBe(-1.5);
    expect(asNumber('.5')).toBe(0.5);
    expect(asNumber('5.')).toBe(5);
  });

  it('refuses hexadecimal, binary, octal, exponent, padded and non-finite values that Number() would read', () => {
    for (const bad of [
      '0x2710',
      '0X2710',
      '0b10011100010000',
      '0o23420',
      '1e5',
      '1E5',
      '1e+5',
      ' 10000',
      '10000 ',
      '\n10000',
      'Infinity',
      '-Infinity',
      'NaN',
      '1_0000',
      '10,000',
      Infinity,
      Number.NaN,
    ]) {
      expect(asNumber(bad), JSON.stringify(String(bad))).toBeUndefined();
      expect(eventMatches(atLeast10k, at(bad)), String(bad)).toBe(false);
    }
    // The example: Number('0x2710') is 10000.
    expect(Number('0x2710')).toBe(10000);
  });
});

describe('state conditions and conversation stops', () => {
  const situation = (states: string[], sparky = false) => ({ states, sparky });

  it('a { state, sparky } condition tests where the event left the member and the agent switch', () => {
    const coldNoSparky = { state: 'cold', sparky: false };
    expect(eventMatches(coldNoSparky, on('follow_ups.exhausted'), situation(['active', 'qualification', 'cold']))).toBe(
      true,
    );
    expect(
      eventMatches(coldNoSparky, on('follow_ups.exhausted'), situation(['active', 'qualification', 'cold'], true)),
    ).toBe(false);
    expect(
      eventMatches(coldNoSparky, on('follow_ups.exhausted'), situation(['active', 'qualification', 'engaged'])),
    ).toBe(false);
    // A parent state holds for every leaf inside it; without a member at hand a state never holds.
    expect(eventMatches({ state: 'qualification' }, on('x'), situation(['active', 'qualification', 'no_show']))).toBe(
      true,
    );
    expect(eventMatches({ state: 'cold' }, on('x'))).toBe(false);
    // Combined with an event: both must hold.
    expect(eventMatches({ event: 'link.clicked', state: 'engaged' }, on('link.clicked'), situation(['engaged']))).toBe(
      true,
    );
    expect(eventMatches({ event: 'link.clicked', state: 'engaged' }, on('call.booked'), situation(['engaged']))).toBe(
      false,
    );
  });

  it('parses state conditions in every list, and refuses sparky alone or where without event', () => {
    const parsed = AgentConfigSchema.parse({ stopConversationOn: [{ state: 'cold', sparky: false }], sparky: true });
    expect(parsed.stopConversationOn).toEqual([{ state: 'cold', sparky: false }]);
    expect(parsed.sparky).toBe(true);
    expect(ConditionSchema.safeParse({ sparky: false }).success).toBe(false);
    expect(ConditionSchema.safeParse({ state: 'cold', where: { a: { eq: 1 } } }).success).toBe(false);
    expect(ConditionSchema.safeParse({ state: 'Cold!' }).success).toBe(false);
  });

  it('evaluateAgentConfig reports a conversation stop under its own progress path', () => {
    const config = AgentConfigSchema.parse({
      stopConversationOn: [{ allOf: [{ event: 'link.clicked' }, { state: 'cold' }] }],
    });
    const first = evaluateAgentConfig(config, on('link.clicked'), [], ['active', 'qualification', 'engaged']);
    expect(first).toMatchObject({ conversationStopMatched: false, matched: ['stopConversationOn.0.0'] });
    const second = evaluateAgentConfig(config, on('follow_ups.exhausted'), first.matched, [
      'active',
      'qualification',
      'cold',
    ]);
    expect(second.conversationStopMatched).toBe(true);
  });
});
