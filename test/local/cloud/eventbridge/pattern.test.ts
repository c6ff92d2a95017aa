import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidEventPatternError } from '../../../../src/core/errors.ts';
import { compilePattern, matches } from '../../../../src/local/cloud/eventbridge/pattern.ts';

/**
 * Examples and expected results from the EventBridge user guide:
 * - "Content filtering in Amazon EventBridge event patterns"
 *   https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-content-based-filtering.html
 * - "Comparison operators for use in event patterns in Amazon EventBridge" (the operator table)
 *   https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html
 * - "Matching null values and empty strings" and "Arrays in Amazon EventBridge event patterns"
 *   https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-null-values.html
 *   https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-arrays.html
 * and from the README of aws/event-ruler, the matching library EventBridge documents as its engine.
 */

/** The EC2 event used throughout the guide and the event-ruler README. */
const ec2Event = {
  version: '0',
  id: 'ddddd4-aaaa-7777-4444-345dd43cc333',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '012345679012',
  time: '2017-10-02T16:24:49Z',
  region: 'us-east-1',
  resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-000000aaaaaa00000'],
  detail: {
    'c-count': 5,
    'd-count': 3,
    'x-limit': 301.8,
    'source-ip': '10.0.0.33',
    'instance-id': 'i-000000aaaaaa00000',
    state: 'running',
  },
};

const withDetail = (detail: Record<string, unknown>) => ({ ...ec2Event, detail: { ...ec2Event.detail, ...detail } });

describe('documented examples', () => {
  it('matches the EC2 instance-termination pattern from "Creating event patterns"', () => {
    const pattern = {
      source: ['aws.ec2'],
      'detail-type': ['EC2 Instance State-change Notification'],
      detail: { state: ['terminated'] },
    };
    expect(matches(pattern, withDetail({ state: 'terminated' }))).toBe(true);
    expect(matches(pattern, ec2Event)).toBe(false);
  });

  it('simple matching: values are ORed, event arrays match on a non-empty intersection', () => {
    const pattern = {
      'detail-type': ['EC2 Instance State-change Notification'],
      resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-000000aaaaaa00000'],
      detail: { state: ['initializing', 'running'] },
    };
    expect(matches(pattern, ec2Event)).toBe(true);
    expect(matches(pattern, withDetail({ state: 'initializing' }))).toBe(true);
    expect(matches(pattern, withDetail({ state: 'stopped' }))).toBe(false);
  });

  it('arrays page: the first pattern value matches the second event array element', () => {
    const pattern = {
      resources: [
        'arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f',
        'arn:aws:ec2:us-east-1:111122223333:instance/i-b188560f',
        'arn:aws:ec2:us-east-1:444455556666:instance/i-b188560f',
      ],
    };
    const event = {
      resources: [
        'arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:eb56d16b-bbf0-401d-b893-d5978ed4a025:autoScalingGroupName/ASGTerminate',
        'arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f',
      ],
    };
    expect(matches(pattern, event)).toBe(true);
    expect(matches(pattern, { resources: [event.resources[0]] })).toBe(false);
  });

  it('prefix matching on "time"', () => {
    expect(matches({ time: [{ prefix: '2017-10-02' }] }, { time: '2017-10-02T18:43:48Z' })).toBe(true);
    expect(matches({ time: [{ prefix: '2017-10-02' }] }, { time: '2017-10-03T18:43:48Z' })).toBe(false);
  });

  it('prefix matching while ignoring case', () => {
    const pattern = { detail: { service: [{ prefix: { 'equals-ignore-case': 'EventB' } }] } };
    for (const service of ['EventBridge', 'EVENTBRIDGE', 'eventbus'])
      expect(matches(pattern, { detail: { service } })).toBe(true);
    expect(matches(pattern, { detail: { service: 'Events' } })).toBe(false);
  });

  it('suffix matching, with and without case', () => {
    expect(matches({ FileName: [{ suffix: '.png' }] }, { FileName: 'image.png' })).toBe(true);
    expect(matches({ FileName: [{ suffix: '.png' }] }, { FileName: 'image.PNG' })).toBe(false);
    const ignoreCase = { detail: { FileName: [{ suffix: { 'equals-ignore-case': '.png' } }] } };
    expect(matches(ignoreCase, { detail: { FileName: 'image.PNG' } })).toBe(true);
    expect(matches(ignoreCase, { detail: { FileName: 'image.jpg' } })).toBe(false);
  });

  it('equals-ignore-case matching', () => {
    expect(matches({ Name: [{ 'equals-ignore-case': 'alice' }] }, { Name: 'Alice' })).toBe(true);
    expect(matches({ Name: [{ 'equals-ignore-case': 'alice' }] }, { Name: 'Alicia' })).toBe(false);
    expect(matches({ source: [{ 'equals-ignore-case': 'EC2' }] }, { source: 'ec2' })).toBe(true);
  });

  it('anything-but with a string, a number, and lists of each', () => {
    expect(matches({ detail: { state: [{ 'anything-but': 'initializing' }] } }, ec2Event)).toBe(true);
    expect(
      matches({ detail: { state: [{ 'anything-but': 'initializing' }] } }, withDetail({ state: 'initializing' })),
    ).toBe(false);
    expect(matches({ detail: { 'x-limit': [{ 'anything-but': 123 }] } }, ec2Event)).toBe(true);
    expect(matches({ detail: { 'x-limit': [{ 'anything-but': 123 }] } }, withDetail({ 'x-limit': 123 }))).toBe(false);
    const states = { detail: { state: [{ 'anything-but': ['stopped', 'overloaded'] }] } };
    expect(matches(states, ec2Event)).toBe(true);
    expect(matches(states, withDetail({ state: 'overloaded' }))).toBe(false);
    const limits = { detail: { 'x-limit': [{ 'anything-but': [100, 200, 300] }] } };
    expect(matches(limits, ec2Event)).toBe(true);
    expect(matches(limits, withDetail({ 'x-limit': 200 }))).toBe(false);
  });

  it('anything-but with prefix, suffix, equals-ignore-case and wildcard', () => {
    const notInit = { detail: { state: [{ 'anything-but': { prefix: 'init' } }] } };
    expect(matches(notInit, ec2Event)).toBe(true);
    expect(matches(notInit, withDetail({ state: 'initializing' }))).toBe(false);
    const notUs = { Region: [{ 'anything-but': { prefix: 'us-' } }] };
    expect(matches(notUs, { Region: 'eu-west-1' })).toBe(true);
    expect(matches(notUs, { Region: 'us-east-1' })).toBe(false);
    const notPng = { FileName: [{ 'anything-but': { suffix: '.png' } }] };
    expect(matches(notPng, { FileName: 'a.jpg' })).toBe(true);
    expect(matches(notPng, { FileName: 'a.png' })).toBe(false);
    const notInitializing = { state: [{ 'anything-but': { 'equals-ignore-case': 'initializing' } }] };
    expect(matches(notInitializing, { state: 'INITIALIZING' })).toBe(false);
    expect(matches(notInitializing, { state: 'running' })).toBe(true);
    const notLib = { FilePath: [{ 'anything-but': { wildcard: '*/lib/*' } }] };
    expect(matches(notLib, { FilePath: 'dir/lib/x.js' })).toBe(false);
    expect(matches(notLib, { FilePath: 'dir/src/x.js' })).toBe(true);
  });

  it('numeric matching: every field of the example must hold', () => {
    const pattern = {
      detail: {
        'c-count': [{ numeric: ['>', 0, '<=', 5] }],
        'd-count': [{ numeric: ['<', 10] }],
        'x-limit': [{ numeric: ['=', 3.018e2] }],
      },
    };
    expect(matches(pattern, ec2Event)).toBe(true);
    expect(matches(pattern, withDetail({ 'c-count': 6 }))).toBe(false);
    expect(matches(pattern, withDetail({ 'c-count': 0 }))).toBe(false);
    expect(matches(pattern, withDetail({ 'd-count': 10 }))).toBe(false);
    expect(matches(pattern, withDetail({ 'x-limit': '301.8' }))).toBe(false); // numeric matching needs JSON numbers
    expect(matches({ Price: [{ numeric: ['=', 100] }] }, { Price: 100 })).toBe(true);
    expect(matches({ Price: [{ numeric: ['>', 10, '<=', 20] }] }, { Price: 20 })).toBe(true);
    expect(matches({ Price: [{ numeric: ['>', 10, '<=', 20] }] }, { Price: 10 })).toBe(false);
  });

  it('IP address matching with cidr (IPv4 and IPv6)', () => {
    const pattern = { detail: { sourceIPAddress: [{ cidr: '10.0.0.0/24' }] } };
    expect(matches(pattern, { detail: { sourceIPAddress: '10.0.0.255' } })).toBe(true);
    expect(matches(pattern, { detail: { sourceIPAddress: '10.0.1.0' } })).toBe(false);
    expect(matches(pattern, { detail: { sourceIPAddress: 'not-an-ip' } })).toBe(false);
    expect(matches({ ip: [{ cidr: '2001:db8::/32' }] }, { ip: '2001:db8:1::1' })).toBe(true);
    expect(matches({ ip: [{ cidr: '2001:db8::/32' }] }, { ip: '2001:db9::1' })).toBe(false);
  });

  it('exists matching: a present leaf, a missing field, and a field that is not a leaf', () => {
    const hasState = { detail: { state: [{ exists: true }] } };
    expect(matches(hasState, { ...ec2Event, detail: { 'instance-id': 'i-abcd1111', state: 'pending' } })).toBe(true);
    const noState = {
      'detail-type': ['EC2 Instance State-change Notification'],
      resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-02ebd4584a2ebd341'],
      detail: { 'c-count': { c1: 100 } },
    };
    expect(matches(hasState, noState)).toBe(false);
    const noCount = { detail: { 'c-count': [{ exists: false }] } };
    expect(matches(noCount, { detail: { state: ['initializing', 'running'] } })).toBe(true);
    // "also matches ... because c-count isn't a leaf node"
    expect(matches(noCount, { detail: { state: ['initializing', 'running'], 'c-count': { c1: 100 } } })).toBe(true);
    expect(matches(noCount, ec2Event)).toBe(false);
    expect(matches({ ProductName: [{ exists: false }] }, {})).toBe(true);
  });

  it('null values and empty strings are matched and not interchangeable', () => {
    const event = { detail: { eventVersion: '', responseElements: null } };
    expect(matches({ detail: { eventVersion: [''] } }, event)).toBe(true);
    expect(matches({ detail: { responseElements: [null] } }, event)).toBe(true);
    expect(matches({ detail: { eventVersion: [null] } }, event)).toBe(false);
    expect(matches({ detail: { responseElements: [''] } }, event)).toBe(false);
  });

  it('the complex example combines prefix, anything-but, numeric and cidr', () => {
    const pattern = {
      time: [{ prefix: '2017-10-02' }],
      detail: {
        state: [{ 'anything-but': 'initializing' }],
        'c-count': [{ numeric: ['>', 0, '<=', 5] }],
        'd-count': [{ numeric: ['<', 10] }],
        'x-limit': [{ 'anything-but': [100, 200, 300] }],
        'source-ip': [{ cidr: '10.0.0.0/8' }],
      },
    };
    expect(matches(pattern, ec2Event)).toBe(true);
    expect(matches(pattern, withDetail({ 'source-ip': '192.168.0.1' }))).toBe(false);
    expect(matches(pattern, { ...ec2Event, time: '2017-10-03T00:00:00Z' })).toBe(false);
  });

  it('wildcard matching', () => {
    const png = { FileName: [{ wildcard: 'dir/*.png' }] };
    expect(matches(png, { FileName: 'dir/image.png' })).toBe(true);
    expect(matches(png, { FileName: 'dir/sub/image.png' })).toBe(true);
    expect(matches(png, { FileName: 'other/image.png' })).toBe(false);
    const bus = { EventBusArn: [{ wildcard: 'arn:aws:events:us-east-1:*:event-bus/*' }] };
    expect(matches(bus, { EventBusArn: 'arn:aws:events:us-east-1:123456789012:event-bus/orders' })).toBe(true);
    expect(matches(bus, { EventBusArn: 'arn:aws:events:eu-west-1:123456789012:event-bus/orders' })).toBe(false);
    expect(matches({ source: [{ wildcard: 'Simple*Service' }] }, { source: 'SimpleQueueService' })).toBe(true);
    // Escapes: \* is a literal star, \\ a literal backslash; regex characters are literal.
    expect(matches({ f: [{ wildcard: 'a\\*b' }] }, { f: 'a*b' })).toBe(true);
    expect(matches({ f: [{ wildcard: 'a\\*b' }] }, { f: 'axb' })).toBe(false);
    expect(matches({ f: [{ wildcard: 'a\\\\b' }] }, { f: 'a\\b' })).toBe(true);
    expect(matches({ f: [{ wildcard: 'a.c' }] }, { f: 'abc' })).toBe(false);
  });

  it('$or: "Location is New York, or Day is Monday", and nested $or with AND inside', () => {
    const pattern = { $or: [{ Location: ['New York'] }, { Day: ['Monday'] }] };
    expect(matches(pattern, { Location: 'New York', Day: 'Sunday' })).toBe(true);
    expect(matches(pattern, { Location: 'Paris', Day: 'Monday' })).toBe(true);
    expect(matches(pattern, { Location: 'Paris', Day: 'Sunday' })).toBe(false);
    // event-ruler: source && (metricName || (metricType && namespace && (metricId || spaceId)) || scope)
    const nested = {
      source: ['aws.cloudwatch'],
      $or: [
        { metricName: ['CPUUtilization', 'ReadLatency'] },
        {
          metricType: ['MetricType'],
          namespace: ['AWS/EC2', 'AWS/ES'],
          $or: [{ metricId: [1234] }, { spaceId: [1000] }],
        },
        { scope: ['Service'] },
      ],
    };
    expect(
      matches(nested, { source: 'aws.cloudwatch', metricType: 'MetricType', namespace: 'AWS/ES', spaceId: 1000 }),
    ).toBe(true);
    expect(
      matches(nested, { source: 'aws.cloudwatch', metricType: 'MetricType', namespace: 'AWS/ES', spaceId: 1 }),
    ).toBe(false);
    expect(matches(nested, { source: 'aws.cloudwatch', scope: 'Service' })).toBe(true);
    expect(matches(nested, { source: 'aws.ec2', scope: 'Service' })).toBe(false);
  });

  it('arrays of objects: fields must match within one element (event-ruler "array consistency")', () => {
    const event = {
      employees: [
        [
          { firstName: 'John', lastName: 'Doe' },
          { firstName: 'Anna', lastName: 'Smith' },
        ],
        [{ firstName: 'Peter', lastName: 'Jones' }],
      ],
    };
    expect(matches({ employees: { firstName: ['Anna'] } }, event)).toBe(true);
    expect(matches({ employees: { firstName: ['Anna'], lastName: ['Smith'] } }, event)).toBe(true);
    expect(matches({ employees: { firstName: ['Anna'], lastName: ['Jones'] } }, event)).toBe(false);
  });
});

describe('operator table of the user guide ("Comparison operators for use in event patterns")', () => {
  it.each([
    ['Empty: LastName is empty', { LastName: [''] }, { LastName: '' }, { LastName: 'Doe' }],
    [
      'Begins with (ignore case)',
      { service: [{ prefix: { 'equals-ignore-case': 'eventb' } }] },
      { service: 'EventBridge' },
      { service: 'Lambda' },
    ],
    [
      'Ends with (ignore case)',
      { service: [{ suffix: { 'equals-ignore-case': 'tbridge' } }] },
      { service: 'EVENTBRIDGE' },
      { service: 'EventBus' },
    ],
    ['Equals (ignore case)', { Name: [{ 'equals-ignore-case': 'alice' }] }, { Name: 'Alice' }, { Name: 'Bob' }],
    ['Exists', { ProductName: [{ exists: true }] }, { ProductName: 'Phone' }, {}],
    ['Not', { Weather: [{ 'anything-but': ['Raining'] }] }, { Weather: 'Sunny' }, { Weather: 'Raining' }],
    ['Null', { UserID: [null] }, { UserID: null }, { UserID: 'u1' }],
    ['Or', { PaymentType: ['Credit', 'Debit'] }, { PaymentType: 'Debit' }, { PaymentType: 'Cash' }],
    [
      'Anything-but (begins with)',
      { Region: [{ 'anything-but': { prefix: 'us-' } }] },
      { Region: 'eu-west-1' },
      { Region: 'us-east-1' },
    ],
    [
      'Anything-but using a wildcard',
      { FilePath: [{ 'anything-but': { wildcard: '*/lib/*' } }] },
      { FilePath: 'src/index.ts' },
      { FilePath: 'src/lib/x.ts' },
    ],
    [
      'Wildcard: a .png file in the folder "dir"',
      { FileName: [{ wildcard: 'dir/*.png' }] },
      { FileName: 'dir/cat.png' },
      { FileName: 'dir/cat.jpg' },
    ],
  ])('%s', (_name, pattern, matching, other) => {
    expect(matches(pattern, matching)).toBe(true);
    expect(matches(pattern, other)).toBe(false);
  });
});

describe('conformance with EventBridge beyond the examples', () => {
  it('anything-but takes a list of prefixes, suffixes, case-insensitive values or wildcards', () => {
    const notUsOrEu = { Region: [{ 'anything-but': { prefix: ['us-', 'eu-'] } }] };
    expect(matches(notUsOrEu, { Region: 'ap-south-1' })).toBe(true);
    expect(matches(notUsOrEu, { Region: 'us-east-1' })).toBe(false);
    expect(matches(notUsOrEu, { Region: 'eu-west-1' })).toBe(false);
    const notImages = { FileName: [{ 'anything-but': { suffix: ['.png', '.jpg'] } }] };
    expect(matches(notImages, { FileName: 'a.txt' })).toBe(true);
    expect(matches(notImages, { FileName: 'a.jpg' })).toBe(false);
    const notStates = { state: [{ 'anything-but': { 'equals-ignore-case': ['Stopped', 'PENDING'] } }] };
    expect(matches(notStates, { state: 'running' })).toBe(true);
    expect(matches(notStates, { state: 'pending' })).toBe(false);
    const notLibOrTest = { FilePath: [{ 'anything-but': { wildcard: ['*/lib/*', '*.test.ts'] } }] };
    expect(matches(notLibOrTest, { FilePath: 'src/a.ts' })).toBe(true);
    expect(matches(notLibOrTest, { FilePath: 'src/a.test.ts' })).toBe(false);
  });

  it('treats a dotted key and its nested form as the same field, in the pattern and in the event', () => {
    const nested = { detail: { state: ['running'] } };
    const dotted = { 'detail.state': ['running'] };
    for (const pattern of [nested, dotted]) {
      expect(matches(pattern, { detail: { state: 'running' } })).toBe(true);
      expect(matches(pattern, { 'detail.state': 'running' })).toBe(true);
      expect(matches(pattern, { detail: { state: 'stopped' } })).toBe(false);
      expect(matches(pattern, { 'detail.state': 'stopped' })).toBe(false);
    }
    // Mixed spellings of one object, on both sides.
    const mixed = { detail: { 'a.b': [1] }, 'detail.c': [2] };
    expect(matches(mixed, { 'detail.a': { b: 1 }, detail: { c: 2 } })).toBe(true);
    expect(matches(mixed, { 'detail.a.b': 1, 'detail.c': 3 })).toBe(false);
    // Dotted and nested values of one event field are one multi-valued field.
    expect(matches({ 'a.b': [2] }, { a: { b: 1 }, 'a.b': 2 })).toBe(true);
    // A field that is both a leaf and an object keeps both.
    expect(matches({ a: [5], 'a.b': [1] }, { a: 5, 'a.b': 1 })).toBe(true);
    // exists:false sees the dotted field too.
    expect(matches({ detail: { state: [{ exists: false }] } }, { 'detail.state': 'x' })).toBe(false);
  });

  it('a field named twice in one pattern keeps its later definition, as event-ruler does', () => {
    const pattern = JSON.parse('{"detail.state": ["running"], "detail": {"state": ["stopped"]}}');
    expect(matches(pattern, { detail: { state: 'stopped' } })).toBe(true);
    expect(matches(pattern, { detail: { state: 'running' } })).toBe(false);
  });

  it('dotted and nested patterns agree on every event (property)', () => {
    const word = fc.constantFrom('a', 'b', 'c');
    const leafValue = fc.oneof(word, fc.integer({ min: 0, max: 3 }));
    const event = fc.dictionary(word, fc.oneof(leafValue, fc.dictionary(word, leafValue, { maxKeys: 3 })), {
      maxKeys: 3,
    });
    fc.assert(
      fc.property(word, word, leafValue, event, (outer, inner, value, e) => {
        const nested = matches({ [outer]: { [inner]: [value] } }, e);
        expect(matches({ [`${outer}.${inner}`]: [value] }, e)).toBe(nested);
      }),
    );
  });

  it('refuses wildcards too complex to match cheaply, per field, and accepts the documented ones', () => {
    for (const glob of [
      'dir/*.png',
      '*/lib/*',
      'arn:aws:events:us-east-1:*:event-bus/*',
      'Simple*Service',
      'a*b*c*d*e',
    ])
      expect(() => compilePattern({ f: [{ wildcard: glob }] })).not.toThrow();
    // Repeating sequences after wildcards keep many partial matches alive at once.
    expect(() => compilePattern({ f: [{ wildcard: '*ab*ab*ab*ab*ab*ab*ab*ab*ab*ab*' }] })).toThrow(
      /f: rule is too complex/,
    );
    // Many leading-wildcard alternatives on one field add up, also across $or branches and anything-but.
    const many = Array.from({ length: 12 }, (_, i) => ({ wildcard: `*-${i}` }));
    expect(() => compilePattern({ f: many })).toThrow(/rule is too complex/);
    expect(() =>
      compilePattern({
        $or: [{ f: many.slice(0, 6) }, { f: [{ 'anything-but': { wildcard: many.slice(6).map((m) => m.wildcard) } }] }],
      }),
    ).toThrow(/rule is too complex/);
    // The same globs spread over different fields are separate machines.
    expect(() => compilePattern(Object.fromEntries(many.map((m, i) => [`f${i}`, [m]])))).not.toThrow();
  });
});

describe('value semantics', () => {
  it('compares by JSON type: numbers by value, never against strings; booleans are literals', () => {
    expect(matches({ n: [300] }, { n: 3.0e2 })).toBe(true);
    expect(matches({ n: ['300'] }, { n: 300 })).toBe(false);
    expect(matches({ b: [true] }, { b: true })).toBe(true);
    expect(matches({ b: ['true'] }, { b: true })).toBe(false);
  });

  it('string operators ignore non-string values; numeric ignores non-numbers', () => {
    expect(matches({ v: [{ prefix: '1' }] }, { v: 12 })).toBe(false);
    expect(matches({ v: [{ 'equals-ignore-case': 'true' }] }, { v: true })).toBe(false);
    expect(matches({ v: [{ numeric: ['>', 0] }] }, { v: '5' })).toBe(false);
  });

  it('anything-but needs the field: a missing field matches nothing but exists:false', () => {
    expect(matches({ state: [{ 'anything-but': 'x' }] }, {})).toBe(false);
    expect(matches({ state: [{ 'anything-but': 'x' }, { exists: false }] }, {})).toBe(true);
  });

  it('anything-but on an event array matches when any element is not excluded', () => {
    expect(matches({ tags: [{ 'anything-but': 'a' }] }, { tags: ['a', 'b'] })).toBe(true);
    expect(matches({ tags: [{ 'anything-but': 'a' }] }, { tags: ['a', 'a'] })).toBe(false);
  });

  it('a nested pattern does not match a scalar, and an empty event array counts as missing', () => {
    expect(matches({ detail: { state: ['x'] } }, { detail: 'x' })).toBe(false);
    expect(matches({ items: [{ exists: false }] }, { items: [] })).toBe(true);
    expect(matches({ items: [{ exists: true }] }, { items: [] })).toBe(false);
  });

  it('exists:false inside a missing object matches (the leaf path does not exist)', () => {
    expect(matches({ detail: { x: [{ exists: false }] } }, { source: 'crm' })).toBe(true);
    expect(matches({ detail: { x: [{ exists: false }], y: ['1'] } }, { source: 'crm' })).toBe(false);
  });

  it('accepts the pattern as JSON text, as CloudFormation allows', () => {
    expect(matches('{"source":["crm"]}', { source: 'crm' })).toBe(true);
  });
});

describe('validation', () => {
  const malformed: [string, unknown, RegExp][] = [
    ['a non-object pattern', ['source'], /\(root\): expected an object/],
    ['an empty pattern', {}, /empty objects/],
    ['a bare value', { source: 'crm' }, /source: expected an array of values or a nested object/],
    ['an empty value list', { source: [] }, /source: empty arrays/],
    ['an unknown operator', { source: [{ contains: 'x' }] }, /source\[0\]: unrecognized match type "contains"/],
    ['two operators in one object', { source: [{ prefix: 'a', suffix: 'b' }] }, /exactly one key/],
    ['a nested array value', { source: [['a']] }, /source\[0\]: expected a string, number, boolean or null/],
    ['a non-boolean exists', { f: [{ exists: 'yes' }] }, /f\[0\]\.exists: expected true or false/],
    [
      'a numeric operator list of the wrong length',
      { f: [{ numeric: ['>', 1, '<'] }] },
      /f\[0\]\.numeric: expected \[op, number\]/,
    ],
    ['an unknown numeric operator', { f: [{ numeric: ['!=', 1] }] }, /unexpected numeric operator "!="/],
    ['"=" inside a range', { f: [{ numeric: ['=', 1, '<', 2] }] }, /unexpected numeric operator "="/],
    ['two lower bounds', { f: [{ numeric: ['>', 1, '>=', 2] }] }, /unexpected numeric operator ">="/],
    ['an empty range', { f: [{ numeric: ['>', 5, '<', 5] }] }, /lower bound 5 must be below the upper bound 5/],
    ['a non-numeric bound', { f: [{ numeric: ['>', '5'] }] }, /f\[0\]\.numeric\[1\]: expected a number/],
    ['a mixed anything-but list', { f: [{ 'anything-but': ['a', 1] }] }, /only strings or only numbers/],
    ['an empty anything-but list', { f: [{ 'anything-but': [] }] }, /at least one value/],
    [
      'an unsupported anything-but operator',
      { f: [{ 'anything-but': { numeric: ['>', 1] } }] },
      /anything-but does not support "numeric"/,
    ],
    [
      'an empty anything-but prefix',
      { f: [{ 'anything-but': { prefix: '' } }] },
      /anything-but\.prefix: anything-but prefix must not be empty/,
    ],
    [
      'an empty anything-but suffix in a list',
      { f: [{ 'anything-but': { suffix: ['.png', ''] } }] },
      /anything-but\.suffix: anything-but suffix must not be empty/,
    ],
    [
      'an empty list of anything-but prefixes',
      { f: [{ 'anything-but': { prefix: [] } }] },
      /expected a string or a non-empty array of strings/,
    ],
    [
      'a list of anything-but prefixes that are not strings',
      { f: [{ 'anything-but': { prefix: ['a', 1] } }] },
      /anything-but\.prefix\[1\]: expected a string/,
    ],
    ['an over-complex wildcard', { f: [{ wildcard: '*a*a*a*a*a*a*a*a*a*a*a*' }] }, /f: rule is too complex/],
    [
      'a non-string prefix',
      { f: [{ prefix: 5 }] },
      /f\[0\]\.prefix: expected a string or \{ "equals-ignore-case": string \}/,
    ],
    ['consecutive wildcards', { f: [{ wildcard: 'a**b' }] }, /consecutive wildcard characters at position 1/],
    ['a bad wildcard escape', { f: [{ wildcard: 'a\\b' }] }, /may only escape/],
    ['a malformed cidr', { f: [{ cidr: '10.0.0.0/33' }] }, /expected an IPv4 or IPv6 address or CIDR block/],
    ['a $or with one branch', { $or: [{ a: ['x'] }] }, /\$or takes an array of at least two pattern objects/],
    ['a malformed branch inside $or', { $or: [{ a: ['x'] }, { b: 'y' }] }, /\$or\[1\]\.b: expected an array/],
    ['JSON text that is not JSON', '{source:', /not valid JSON/],
    ['an infinite number', { f: [Infinity] }, /expected a number/],
  ];

  it.each(malformed)('rejects %s with a path', (_, pattern, message) => {
    expect(() => compilePattern(pattern)).toThrow(InvalidEventPatternError);
    expect(() => compilePattern(pattern)).toThrow(message);
  });
});

describe('properties', () => {
  const ascii = fc.string({ unit: 'grapheme-ascii', maxLength: 12 });
  const scalar = fc.oneof(ascii, fc.integer(), fc.boolean(), fc.constant(null));

  it('anything-but [x] is the negation of [x] for a present scalar field', () => {
    fc.assert(
      fc.property(fc.oneof(ascii, fc.integer()), scalar, (x, value) => {
        expect(matches({ f: [{ 'anything-but': x }] }, { f: value })).toBe(!matches({ f: [x] }, { f: value }));
      }),
    );
  });

  it('anything-but {prefix} is the negation of prefix for a present string field', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 12 }), ascii, (p, value) => {
        expect(matches({ f: [{ 'anything-but': { prefix: p } }] }, { f: value })).toBe(
          !matches({ f: [{ prefix: p }] }, { f: value }),
        );
      }),
    );
  });

  it('an event array matches a leaf pattern iff one of its elements does', () => {
    const leaf = fc.constantFrom<unknown[]>(
      ['a'],
      [{ prefix: 'a' }],
      [{ 'anything-but': 'a' }],
      [{ numeric: ['>', 0] }],
      [{ 'equals-ignore-case': 'A' }],
      [null],
    );
    fc.assert(
      fc.property(
        leaf,
        fc.array(fc.oneof(fc.constantFrom('a', 'A', 'ab', 'b'), fc.integer({ min: -3, max: 3 }), fc.constant(null)), {
          minLength: 1,
          maxLength: 4,
        }),
        (values, elements) => {
          const pattern = { f: values };
          expect(matches(pattern, { f: elements })).toBe(elements.some((e) => matches(pattern, { f: e })));
        },
      ),
    );
  });

  it('a numeric range holds exactly between its bounds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1000, max: 1000 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.double({ min: -3000, max: 3000, noNaN: true }),
        (low, width, n) => {
          const high = low + width;
          expect(matches({ f: [{ numeric: ['>=', low, '<', high] }] }, { f: n })).toBe(n >= low && n < high);
        },
      ),
    );
  });

  it('a wildcard without stars is exact matching, and "*" plus a suffix is suffix matching', () => {
    const escapeWildcard = (s: string) => s.replace(/[\\*]/g, '\\$&');
    fc.assert(
      fc.property(ascii, ascii, (s, value) => {
        expect(matches({ f: [{ wildcard: escapeWildcard(s) }] }, { f: value })).toBe(value === s);
        expect(matches({ f: [{ wildcard: `*${escapeWildcard(s)}` }] }, { f: value })).toBe(value.endsWith(s));
      }),
    );
  });

  it('$or of two patterns is the OR of matching each', () => {
    const fieldPattern = fc.record(
      { a: fc.constantFrom<unknown[]>(['x'], [{ exists: false }], [{ prefix: 'x' }]) },
      { requiredKeys: [] },
    );
    const other = fc.record({ b: fc.constantFrom<unknown[]>(['y'], [{ 'anything-but': 'y' }]) });
    const event = fc.record({ a: fc.constantFrom('x', 'xx', 'z'), b: fc.constantFrom('y', 'w') }, { requiredKeys: [] });
    fc.assert(
      fc.property(fieldPattern, other, event, (p1, p2, e) => {
        const left = Object.keys(p1).length > 0 ? p1 : { c: [{ exists: false }] };
        expect(matches({ $or: [left, p2] }, e)).toBe(matches(left, e) || matches(p2, e));
      }),
    );
  });

  it('cidr /24 matches exactly the addresses sharing the first three octets', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    fc.assert(
      fc.property(fc.tuple(octet, octet, octet, octet), fc.tuple(octet, octet, octet, octet), (net, ip) => {
        const inside = net[0] === ip[0] && net[1] === ip[1] && net[2] === ip[2];
        expect(matches({ ip: [{ cidr: `${net.slice(0, 3).join('.')}.0/24` }] }, { ip: ip.join('.') })).toBe(inside);
      }),
    );
  });
});
