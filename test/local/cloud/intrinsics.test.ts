import { describe, expect, it } from 'vitest';
import { DefinitionError } from '../../../src/core/errors.ts';
import { arnToLogicalId, type CfnTemplate, resolveIntrinsics } from '../../../src/local/cloud/intrinsics.ts';

const template: CfnTemplate = {
  Parameters: { Stage: { Default: 'dev' }, NoDefault: {} },
  Conditions: {
    IsDev: { 'Fn::Equals': [{ Ref: 'Stage' }, 'dev'] },
    IsProd: { 'Fn::Not': [{ Condition: 'IsDev' }] },
    DevAndUsEast: { 'Fn::And': [{ Condition: 'IsDev' }, { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] }] },
  },
  Mappings: { Runtime: { 'us-east-1': { value: 'nodejs22.x' } } },
  Resources: {
    StepFnA1B2: { Type: 'AWS::Lambda::Function', Properties: {} },
    NamedFn: {
      Type: 'AWS::Lambda::Function',
      Properties: { FunctionName: { 'Fn::Join': ['-', ['named', { Ref: 'Stage' }]] } },
    },
    EventsTable: { Type: 'AWS::DynamoDB::Table', Properties: {} },
    NamedTable: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: 'tickets' } },
    Machine: { Type: 'AWS::StepFunctions::StateMachine', Properties: {} },
    Bus: { Type: 'AWS::Events::EventBus', Properties: { Name: 'stepwise-bus' } },
    Queue: { Type: 'AWS::SQS::Queue', Properties: {} },
    Role: { Type: 'AWS::IAM::Role', Properties: {} },
    Alarm: { Type: 'AWS::CloudWatch::Alarm', Properties: {} },
  },
};

const resolve = (value: unknown) => resolveIntrinsics(value, template, { stackName: 'Demo' });

describe('resolveIntrinsics', () => {
  it('gives each resource type an ARN of its service shape that ends in the logical id', () => {
    expect(resolve({ 'Fn::GetAtt': ['StepFnA1B2', 'Arn'] })).toBe(
      'arn:aws:lambda:us-east-1:123456789012:function:StepFnA1B2',
    );
    expect(resolve({ 'Fn::GetAtt': 'Machine.Arn' })).toBe('arn:aws:states:us-east-1:123456789012:stateMachine:Machine');
    expect(resolve({ 'Fn::GetAtt': ['EventsTable', 'Arn'] })).toBe(
      'arn:aws:dynamodb:us-east-1:123456789012:table/EventsTable',
    );
    expect(resolve({ 'Fn::GetAtt': ['Bus', 'Arn'] })).toBe('arn:aws:events:us-east-1:123456789012:event-bus/Bus');
    expect(resolve({ 'Fn::GetAtt': ['Queue', 'Arn'] })).toBe('arn:aws:sqs:us-east-1:123456789012:Queue');
    expect(resolve({ 'Fn::GetAtt': ['Role', 'Arn'] })).toBe('arn:aws:iam::123456789012:role/Role');
    expect(resolve({ 'Fn::GetAtt': ['Alarm', 'Arn'] })).toBe('arn:aws:cloudwatch:us-east-1:123456789012:alarm/Alarm');
  });

  it('resolves Ref like CloudFormation: names, table names, state machine ARNs, queue URLs, parameters, pseudo parameters', () => {
    expect(resolve({ Ref: 'EventsTable' })).toBe('EventsTable');
    expect(resolve({ Ref: 'NamedTable' })).toBe('tickets');
    expect(resolve({ Ref: 'NamedFn' })).toBe('named-dev');
    expect(resolve({ Ref: 'StepFnA1B2' })).toBe('StepFnA1B2');
    expect(resolve({ Ref: 'Bus' })).toBe('stepwise-bus');
    expect(resolve({ Ref: 'Machine' })).toBe('arn:aws:states:us-east-1:123456789012:stateMachine:Machine');
    expect(resolve({ Ref: 'Queue' })).toBe('https://sqs.us-east-1.amazonaws.com/123456789012/Queue');
    expect(resolve({ Ref: 'Stage' })).toBe('dev');
    expect(
      resolve(
        ['AWS::Region', 'AWS::AccountId', 'AWS::Partition', 'AWS::URLSuffix', 'AWS::StackName'].map((Ref) => ({ Ref })),
      ),
    ).toEqual(['us-east-1', '123456789012', 'aws', 'amazonaws.com', 'Demo']);
  });

  it('resolves a CDK-style DefinitionString into parseable ASL', () => {
    const definitionString = {
      'Fn::Join': [
        '',
        [
          '{"StartAt":"a","States":{"a":{"Type":"Task","Resource":"',
          { 'Fn::GetAtt': ['StepFnA1B2', 'Arn'] },
          '","End":true}}}',
        ],
      ],
    };
    expect(JSON.parse(resolve(definitionString) as string)).toEqual({
      StartAt: 'a',
      States: { a: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:StepFnA1B2', End: true } },
    });
  });

  it('resolves Fn::Sub, Fn::Select, Fn::Split, Fn::FindInMap, Fn::If, conditions and AWS::NoValue', () => {
    expect(
      resolve({ 'Fn::Sub': ['${AWS::Region}/${Name}/${!Literal}/${StepFnA1B2.Arn}', { Name: { Ref: 'Stage' } }] }),
    ).toBe('us-east-1/dev/${Literal}/arn:aws:lambda:us-east-1:123456789012:function:StepFnA1B2');
    expect(resolve({ 'Fn::Sub': '${EventsTable}' })).toBe('EventsTable');
    expect(resolve({ 'Fn::Select': [1, { 'Fn::Split': ['/', 'a/b/c'] }] })).toBe('b');
    expect(resolve({ 'Fn::FindInMap': ['Runtime', { Ref: 'AWS::Region' }, 'value'] })).toBe('nodejs22.x');
    expect(resolve({ 'Fn::If': ['IsDev', 'dev-value', 'other'] })).toBe('dev-value');
    expect(resolve({ 'Fn::If': ['IsProd', 'prod-value', 'other'] })).toBe('other');
    expect(resolve({ 'Fn::If': ['DevAndUsEast', 'both', 'no'] })).toBe('both');
    expect(
      resolve({ a: 1, b: { 'Fn::If': ['IsProd', 2, { Ref: 'AWS::NoValue' }] }, c: [1, { Ref: 'AWS::NoValue' }, 3] }),
    ).toEqual({ a: 1, c: [1, 3] });
  });

  it('resolves Fn::ImportValue from the exporting stack', () => {
    const exporting: CfnTemplate = {
      Resources: { Shared: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: 'shared' } } },
      Outputs: {
        SharedName: { Value: { Ref: 'Shared' }, Export: { Name: { 'Fn::Sub': '${AWS::StackName}:SharedName' } } },
      },
    };
    const ctx = { stackName: 'Demo', templates: { Data: exporting, Demo: template } };
    expect(resolveIntrinsics({ 'Fn::ImportValue': 'Data:SharedName' }, template, ctx)).toBe('shared');
  });

  it('throws a DefinitionError naming the path for unknown intrinsics, resources, attributes and parameters', () => {
    const fails = (value: unknown, message: RegExp) => {
      expect(() => resolve(value)).toThrow(DefinitionError);
      expect(() => resolve(value)).toThrow(message);
    };
    fails(
      { Env: { Variables: { X: { 'Fn::Transmogrify': [] } } } },
      /template Demo: Env\.Variables\.X: unsupported intrinsic Fn::Transmogrify/,
    );
    fails({ Ref: 'Missing' }, /unknown resource "Missing"/);
    fails(
      { 'Fn::GetAtt': ['StepFnA1B2', 'Colour'] },
      /unsupported attribute Fn::GetAtt StepFnA1B2\.Colour \(AWS::Lambda::Function\)/,
    );
    fails({ Ref: 'NoDefault' }, /parameter "NoDefault" has no Default/);
    fails({ 'Fn::ImportValue': 'Nope' }, /no stack exports "Nope"/);
    fails({ 'Fn::Select': [5, ['a']] }, /index 5 out of range/);
  });
});

describe('arnToLogicalId', () => {
  it('inverts every placeholder ARN', () => {
    for (const id of ['StepFnA1B2', 'Machine', 'EventsTable', 'Bus', 'Queue', 'Role', 'Alarm']) {
      expect(arnToLogicalId(resolve({ 'Fn::GetAtt': [id, 'Arn'] }) as string)).toBe(id);
    }
  });

  it('ignores a Lambda qualifier and rejects what is not an ARN', () => {
    expect(arnToLogicalId('arn:aws:lambda:us-east-1:123456789012:function:StepFn:$LATEST')).toBe('StepFn');
    expect(() => arnToLogicalId('StepFn')).toThrow(/not an ARN/);
  });
});
