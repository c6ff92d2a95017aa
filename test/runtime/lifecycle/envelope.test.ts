import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/core/errors.ts';
import type { LifecycleEvent } from '../../../src/definitions/lifecycle/schema.ts';
import { eventFromEnvelope, toPutEventsEntry } from '../../../src/runtime/lifecycle/envelope.ts';
import { def } from './support.ts';

const envelope = (detail: Record<string, unknown>, overrides: Record<string, unknown> = {}) => ({
  version: '0',
  id: 'eb-1',
  'detail-type': 'call.booked',
  source: 'stepwise.crm',
  account: '123456789012',
  time: '2025-01-06T14:00:00Z',
  region: 'us-east-1',
  resources: [],
  detail,
  ...overrides,
});

describe('EventBridge envelope mapping', () => {
  it('takes the type from detail-type, the time from time, the member from detail.memberId and the rest of detail as detail', () => {
    expect(eventFromEnvelope(def, envelope({ memberId: 'member-42', eventId: 'crm-981', calendar: 'sales' }))).toEqual({
      id: 'crm-981',
      entityId: 'member-42',
      type: 'call.booked',
      time: '2025-01-06T14:00:00Z',
      detail: { calendar: 'sales' },
    });
  });

  it('uses the envelope id (stable across EventBridge redeliveries) when the producer gives no eventId, and omits an empty detail', () => {
    expect(eventFromEnvelope(def, envelope({ memberId: 'member-42' }))).toEqual({
      id: 'eb-1',
      entityId: 'member-42',
      type: 'call.booked',
      time: '2025-01-06T14:00:00Z',
    });
  });

  it('refuses what cannot be logged, naming the field', () => {
    const bad: [unknown, RegExp][] = [
      [envelope({}), /detail\.memberId/],
      [envelope({ memberId: '' }), /detail\.memberId/],
      [envelope({ memberId: 'l' }, { time: 'yesterday' }), /time/],
      [envelope({ memberId: 'l' }, { 'detail-type': '' }), /detail-type/],
      [{ detail: { memberId: 'l' } }, /EventBridge event: id/],
      [envelope({ memberId: 42 }), /detail\.memberId: 42 is not a non-empty string/],
      [envelope({ memberId: 'l', eventId: 7 }), /detail\.eventId/],
      [envelope([] as never), /EventBridge event: detail: expected an object/],
    ];
    for (const [input, message] of bad) {
      expect(() => eventFromEnvelope(def, input)).toThrow(InvalidInputError);
      expect(() => eventFromEnvelope(def, input)).toThrow(message);
    }
  });

  it('puts an event so that the envelope EventBridge makes of it maps back to the same event', () => {
    const event: LifecycleEvent = {
      id: 'e-7',
      entityId: 'member-1',
      type: 'deal.closed',
      time: '2025-03-01T10:00:00Z',
      detail: { value: 12000 },
    };
    const entry = toPutEventsEntry(def, event, 'stepwise-dev-members', 'stepwise.crm');
    expect(entry).toEqual({
      EventBusName: 'stepwise-dev-members',
      Source: 'stepwise.crm',
      DetailType: 'deal.closed',
      Time: new Date('2025-03-01T10:00:00Z'),
      Detail: JSON.stringify({ memberId: 'member-1', eventId: 'e-7', value: 12000 }),
    });
    const received = envelope(JSON.parse(entry.Detail!), {
      id: 'eb-new',
      'detail-type': entry.DetailType,
      time: entry.Time!.toISOString().replace('.000', ''),
    });
    expect(eventFromEnvelope(def, received)).toEqual(event);
  });

  it('keeps every key of detail, __proto__ and constructor included, as data', () => {
    const detail = JSON.parse('{"memberId":"l","__proto__":{"polluted":true},"constructor":"c","n":1e300}') as Record<
      string,
      unknown
    >;
    const event = eventFromEnvelope(def, envelope(detail));
    expect(Object.keys(event.detail!)).toEqual(['__proto__', 'constructor', 'n']);
    expect(JSON.stringify(event.detail)).toBe('{"__proto__":{"polluted":true},"constructor":"c","n":1e+300}');
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    expect(JSON.parse(toPutEventsEntry(def, event, 'b', 'stepwise.crm').Detail!)).toEqual(
      JSON.parse('{"memberId":"l","eventId":"eb-1","__proto__":{"polluted":true},"constructor":"c","n":1e300}'),
    );
  });

  it('refuses an event whose detail uses a key the envelope owns, or that is not an event', () => {
    const base: LifecycleEvent = { id: 'e', entityId: 'l', type: 'link.clicked', time: '2025-03-01T10:00:00Z' };
    expect(() => toPutEventsEntry(def, { ...base, detail: { memberId: 'x' } }, 'b', 'stepwise.crm')).toThrow(
      'detail.memberId is reserved',
    );
    expect(() => toPutEventsEntry(def, { ...base, detail: { eventId: 'x' } }, 'b', 'stepwise.crm')).toThrow(
      'detail.eventId is reserved',
    );
    expect(() => toPutEventsEntry(def, { ...base, time: 'soon' }, 'b', 'stepwise.crm')).toThrow(
      /lifecycle event: time/,
    );
  });
});
