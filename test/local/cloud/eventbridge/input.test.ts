import { describe, expect, it } from 'vitest';
import { DefinitionError } from '../../../../src/core/errors.ts';
import { compileTargetInput } from '../../../../src/local/cloud/eventbridge/input.ts';

const event = {
  version: '0',
  id: 'e-1',
  'detail-type': 'lead.created',
  source: 'crm',
  account: '123456789012',
  time: '2024-01-02T03:04:05Z',
  region: 'us-east-1',
  resources: ['arn:aws:x:1', 'arn:aws:x:2'],
  detail: { id: 'L-1', score: 7, tags: ['a', 'b'], name: 'Ann "the" Lee', nested: { ok: true } },
};
const rule = {
  ruleName: 'OnLead',
  ruleArn: 'arn:aws:events:us-east-1:123456789012:rule/OnLead',
  ingestionTime: '2024-01-02T03:04:06Z',
};

describe('target input', () => {
  it('delivers a copy of the whole event by default', () => {
    const input = compileTargetInput({}, 'T')(event, rule) as typeof event;
    expect(input).toEqual(event);
    input.detail.id = 'changed';
    expect(event.detail.id).toBe('L-1');
  });

  it('Input delivers the constant JSON', () => {
    expect(compileTargetInput({ Input: '{"fixed":[1,2]}' }, 'T')(event, rule)).toEqual({ fixed: [1, 2] });
  });

  it('InputPath selects part of the event (dot, bracket and index forms)', () => {
    expect(compileTargetInput({ InputPath: '$.detail' }, 'T')(event, rule)).toEqual(event.detail);
    expect(compileTargetInput({ InputPath: "$.detail['nested'].ok" }, 'T')(event, rule)).toBe(true);
    expect(compileTargetInput({ InputPath: '$.resources[1]' }, 'T')(event, rule)).toBe('arn:aws:x:2');
    expect(compileTargetInput({ InputPath: '$' }, 'T')(event, rule)).toEqual(event);
    expect(compileTargetInput({ InputPath: '$.detail.missing.deeper' }, 'T')(event, rule)).toBeUndefined();
  });

  it('InputTransformer fills placeholders as JSON outside quotes and as text inside them', () => {
    const build = compileTargetInput(
      {
        InputTransformer: {
          InputPathsMap: {
            id: '$.detail.id',
            score: '$.detail.score',
            tags: '$.detail.tags',
            name: '$.detail.name',
            none: '$.detail.none',
          },
          InputTemplate:
            '{"lead":<id>,"score":<score>,"tags":<tags>,"line":"<name> scored <score>","missing":<none>,"rule":"<aws.events.rule-name>","at":"<aws.events.event.ingestion-time>"}',
        },
      },
      'T',
    );
    expect(build(event, rule)).toEqual({
      lead: 'L-1',
      score: 7,
      tags: ['a', 'b'],
      line: 'Ann "the" Lee scored 7',
      missing: null,
      rule: 'OnLead',
      at: '2024-01-02T03:04:06Z',
    });
  });

  it('InputTransformer passes the original event and rule ARN through the predefined variables', () => {
    const build = compileTargetInput(
      { InputTransformer: { InputTemplate: '{"event":<aws.events.event.json>,"arn":"<aws.events.rule-arn>"}' } },
      'T',
    );
    expect(build(event, rule)).toEqual({ event, arn: rule.ruleArn });
  });

  it('a template that is not JSON is delivered as text; unknown <tags> stay as written', () => {
    const build = compileTargetInput(
      { InputTransformer: { InputPathsMap: { id: '$.detail.id' }, InputTemplate: 'Lead <id> for <team>' } },
      'T',
    );
    expect(build(event, rule)).toBe('Lead "L-1" for <team>');
  });

  it('rejects malformed settings when compiled', () => {
    expect(() => compileTargetInput({ Input: '{not json' }, 'Rule.Targets.0')).toThrow(DefinitionError);
    expect(() => compileTargetInput({ Input: '{not json' }, 'Rule.Targets.0')).toThrow(
      /Rule\.Targets\.0\.Input: not valid JSON/,
    );
    expect(() => compileTargetInput({ InputPath: 'detail.id' }, 'T')).toThrow(/unsupported JSONPath "detail.id"/);
    expect(() => compileTargetInput({ InputPath: '$..id' }, 'T')).toThrow(/unsupported JSONPath/);
    expect(() =>
      compileTargetInput({ InputTransformer: { InputPathsMap: { x: '$[*]' }, InputTemplate: '<x>' } }, 'T'),
    ).toThrow(/InputPathsMap\.x/);
    expect(() => compileTargetInput({ Input: '{}', InputPath: '$' }, 'T')).toThrow(/mutually exclusive/);
  });
});
