/**
 * AgentWorkflow and StepwiseFunction on a workflow of its own (not the fixture project's): nothing in the compiler is
 * specific to one graph.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { AgentWorkflow } from '../../src/cdk/constructs/agent-workflow.ts';
import { StepwiseFunction } from '../../src/cdk/constructs/stepwise-function.ts';
import { workflowStackName } from '../../src/cdk/names.ts';
import { WorkflowStack } from '../../src/cdk/stacks/workflow-stack.ts';
import { loadWorkflowFrom } from '../../src/definitions/workflow/loader.ts';
import type { StepDefinition } from '../../src/definitions/workflow/schema.ts';
import { type EnvConfig, EnvConfigSchema } from '../../src/project/config.ts';
import type { WorkflowPlugin } from '../../src/runtime/plugin.ts';
import { defineTool } from '../../src/runtime/tools/types.ts';
import { fixtureEnv } from '../support/fixture-project.ts';
import { actionsOf, functionOfStep, type Json, stateMachineOf, statementsOfFunction } from './template.ts';

const root = mkdtempSync(join(tmpdir(), 'stepwise-infra-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A looping workflow with non-default limits, written to a temp folder and loaded like any other. */
function writeWorkflow(name: string, tools: string[]): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'steps'), { recursive: true });
  writeFileSync(
    join(dir, 'workflow.yaml'),
    `name: ${name}\ndescription: Plans and acts in a loop.\nversion: 0.1.0\nentry: a-plan\nmaxSteps: 4\nfallback: z-fallback\n` +
      `model: { id: base-model-v1 }\nretry: { maxAttempts: 5, intervalSeconds: 1, backoffRate: 1.5, maxDelaySeconds: 8 }\ntools: [${tools.join(', ')}]\n`,
  );
  const step = (file: string, fm: string, body = 'Decide.') =>
    writeFileSync(
      join(dir, 'steps', `${file}.md`),
      `---\nname: ${file}\ndescription: Step ${file}.\nversion: 1.0.0\n${fm}---\n${body}\n`,
    );
  step('a-plan', 'kind: llm\nnext: [b-act, z-fallback]\n');
  step('b-act', `kind: code\nhandler: act\nnext: [a-plan, DONE]\ntools: [${tools.join(', ')}]\n`);
  step('z-fallback', 'kind: code\nhandler: fallback\nnext: [DONE]\n');
  return dir;
}

const loop = loadWorkflowFrom(writeWorkflow('loop', ['lookup']));
/** The workflow with its code: a tool without AWS resources, no code step modules (the compiler needs none). */
const loopPlugin: WorkflowPlugin = {
  def: loop,
  tools: {
    lookup: defineTool({
      name: 'lookup',
      description: 'Look a record up.',
      input: z.strictObject({ id: z.string() }),
      run: async () => ({}),
    }),
  },
  codeSteps: {},
};
const dev = fixtureEnv('dev');
const profileConfig: EnvConfig = { ...dev, modelId: 'us.vendor.big-model-v2:0' };

function synth(config: EnvConfig, extra: (stack: Stack) => void = () => {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test');
  const bound: string[] = [];
  const topic = new sns.Topic(stack, 'Alarms', { enforceSSL: true });
  const workflow = new AgentWorkflow(stack, 'Loop', {
    plugin: loopPlugin,
    config,
    alarmTopic: topic,
    bindStep: (step: StepDefinition, fn: StepwiseFunction) => bound.push(`${step.name}:${fn.node.id}`),
  });
  extra(stack);
  return { app, stack, workflow, bound, template: Template.fromStack(stack) };
}

const profile = synth(profileConfig, (stack) => {
  const reader = new iam.Role(stack, 'Reader', { assumedBy: new iam.AccountRootPrincipal() });
  const loopWorkflow = stack.node.findChild('Loop') as AgentWorkflow;
  loopWorkflow.grantStartExecution(reader);
});
const { asl } = stateMachineOf(profile.template);

describe('AgentWorkflow', () => {
  it('calls bindStep once per step and exposes one function per step', () => {
    expect(profile.bound).toEqual(['a-plan:a-plan', 'b-act:b-act', 'z-fallback:z-fallback']);
    expect(Object.keys(profile.workflow.functions)).toEqual(['a-plan', 'b-act', 'z-fallback']);
    expect(profile.workflow.functions['b-act']!.entryPath).toBe('runtime/step-handler/handler.ts');
  });

  it('compiles the manifest limits: maxSteps in every breaker, the retry policy in every Task', () => {
    for (const step of loop.steps) {
      expect(asl.States[`${step.name}.route`].Choices[0].And[0]).toEqual({
        Variable: '$.result.count',
        NumericGreaterThanEquals: 4,
      });
      expect(asl.States[step.name].Retry[0]).toMatchObject({
        MaxAttempts: 5,
        IntervalSeconds: 1,
        BackoffRate: 1.5,
        MaxDelaySeconds: 8,
        JitterStrategy: 'FULL',
      });
    }
  });

  it('routes a loop back to an earlier Task and DONE to Done', () => {
    expect(asl.States['b-act.route'].Choices.slice(1)).toEqual([
      { Variable: '$.result.next', StringEquals: 'a-plan', Next: 'a-plan' },
      { Variable: '$.result.next', StringEquals: 'DONE', Next: 'Done' },
    ]);
    expect(asl.States['b-act.route'].Default).toBe('z-fallback');
    expect(asl.States['z-fallback.route'].Default).toBe('RouteRejected');
  });

  it('lets the LLM step use a cross-region inference profile and its foundation model, and nothing else', () => {
    const bedrock = statementsOfFunction(profile.template, functionOfStep(profile.template, 'a-plan')).filter((s) =>
      actionsOf(s).includes('bedrock:InvokeModel'),
    );
    expect(bedrock).toHaveLength(1);
    const resources = JSON.stringify(bedrock[0]!.Resource);
    expect(resources).toContain(':inference-profile/us.vendor.big-model-v2:0');
    expect(resources).toContain(':bedrock:*::foundation-model/vendor.big-model-v2:0');
    const env =
      profile.template.findResources('AWS::Lambda::Function')[functionOfStep(profile.template, 'b-act')]!.Properties
        .Environment.Variables;
    expect(env).toMatchObject({
      WORKFLOW: 'loop',
      STEP: 'b-act',
      MODEL_ID: 'us.vendor.big-model-v2:0',
      MODEL_PROVIDER: 'bedrock',
    });
  });

  it('grants no Bedrock permission when the environment deploys the offline stand-in', () => {
    const offline = synth({ ...dev, modelProvider: 'offline' });
    const all = Object.values(offline.template.findResources('AWS::IAM::Policy')).flatMap(
      (p) => p.Properties.PolicyDocument.Statement as Json[],
    );
    expect(all.flatMap(actionsOf).filter((a) => a.startsWith('bedrock:'))).toEqual([]);
  });

  it('an OpenAI-compatible endpoint: LLM steps get its base URL and model in their environment, the key only as an SSM parameter they may read', () => {
    const openai = synth({
      ...dev,
      modelProvider: 'openai',
      openai: {
        baseUrl: 'https://llm.internal.example.com/v1',
        model: 'qwen2.5-7b-instruct',
        apiKeyParameter: '/stepwise/dev/openai-api-key',
      },
    });
    const functions = openai.template.findResources('AWS::Lambda::Function');
    const envOf = (step: string) => functions[functionOfStep(openai.template, step)]!.Properties.Environment.Variables;
    expect(envOf('a-plan')).toMatchObject({
      MODEL_PROVIDER: 'openai',
      OPENAI_BASE_URL: 'https://llm.internal.example.com/v1',
      OPENAI_MODEL: 'qwen2.5-7b-instruct',
      OPENAI_API_KEY_PARAMETER: '/stepwise/dev/openai-api-key',
    });
    expect(envOf('a-plan')).not.toHaveProperty('OPENAI_API_KEY');
    expect(envOf('b-act')).not.toHaveProperty('OPENAI_BASE_URL');
    const statements = statementsOfFunction(openai.template, functionOfStep(openai.template, 'a-plan'));
    const ssm = statements.filter((st) => actionsOf(st).includes('ssm:GetParameter'));
    expect(JSON.stringify(ssm)).toContain(':parameter/stepwise/dev/openai-api-key');
    const all = Object.values(openai.template.findResources('AWS::IAM::Policy')).flatMap(
      (p) => p.Properties.PolicyDocument.Statement as Json[],
    );
    expect(all.flatMap(actionsOf).filter((a) => a.startsWith('bedrock:'))).toEqual([]);
    expect(
      statementsOfFunction(openai.template, functionOfStep(openai.template, 'b-act')).flatMap(actionsOf),
    ).not.toContain('ssm:GetParameter');
  });

  it('refuses modelProvider openai without the endpoint', () => {
    expect(() => EnvConfigSchema.parse({ ...dev, modelProvider: 'openai' })).toThrow(
      /modelProvider openai needs the openai endpoint/,
    );
  });

  it('notifies the alarm topic and grants StartExecution on its state machine only', () => {
    profile.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ExecutionsFailed',
      AlarmActions: [{ Ref: Object.keys(profile.template.findResources('AWS::SNS::Topic'))[0] }],
    });
    const readerPolicy = Object.values(profile.template.findResources('AWS::IAM::Policy')).find((p) =>
      JSON.stringify(p.Properties.Roles).includes('Reader'),
    )!;
    const machineId = Object.keys(profile.template.findResources('AWS::StepFunctions::StateMachine'))[0];
    expect(readerPolicy.Properties.PolicyDocument.Statement).toEqual([
      { Action: 'states:StartExecution', Effect: 'Allow', Resource: { Ref: machineId } },
    ]);
  });

  it('leaves no unacknowledged cdk-nag finding, the inference-profile wildcard included', () => {
    const report = new AwsSolutionsChecks().validateScope(profile.stack.node.findChild('Loop'));
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  });
});

describe('StepwiseFunction', () => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Fn');
  const table = new dynamodb.Table(stack, 'Things', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
  });
  const fn = new StepwiseFunction(stack, 'Handler', {
    entry: 'runtime/step-handler/handler.ts',
    config: dev,
    serviceName: 'things',
  });
  fn.bindTable(table, 'readWrite', 'THINGS_TABLE');
  const template = Template.fromStack(stack);
  const [fnId, resource] = Object.entries(template.findResources('AWS::Lambda::Function'))[0]!;

  it('sets the env var with the grant, and ships no workflow unless asked', () => {
    const env = resource.Properties.Environment.Variables;
    expect(env).toMatchObject({
      THINGS_TABLE: { Ref: Object.keys(template.findResources('AWS::DynamoDB::Table'))[0] },
      POWERTOOLS_SERVICE_NAME: 'things',
    });
    expect(env.STATEMACHINES_DIR).toBeUndefined();
    const dynamo = statementsOfFunction(template, fnId).filter((s) =>
      actionsOf(s).some((a) => a.startsWith('dynamodb:')),
    );
    expect(dynamo.flatMap(actionsOf)).toEqual(
      expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query']),
    );
    expect(resource.Metadata['stepwise:entry']).toBe('runtime/step-handler/handler.ts');
  });

  it('writes only to its own log group, with the environment retention', () => {
    const logs = statementsOfFunction(template, fnId).filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
    expect(logs).toEqual([
      {
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [resource.Properties.LoggingConfig.LogGroup.Ref, 'Arn'] },
      },
    ]);
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: dev.logRetention });
    template.resourceCountIs('AWS::IAM::ManagedPolicy', 0);
    expect(JSON.stringify(template.findResources('AWS::IAM::Role'))).not.toContain('ManagedPolicyArns');
  });
});

describe('WorkflowStack on a workflow of plain tools', () => {
  const nothing = async () => ({});
  /** `lookup` reads a table; `record` writes another once per execution. */
  const lookup = defineTool({
    name: 'lookup',
    description: 'Look a record up.',
    input: z.strictObject({ id: z.string() }),
    resources: { tables: { records: 'read' } },
    run: nothing,
  });
  const record = defineTool({
    name: 'record',
    description: 'Record an outcome.',
    input: z.strictObject({ outcome: z.string() }),
    idempotency: 'execution',
    resources: { tables: { 'audit-log': 'write' } },
    run: nothing,
  });
  const stackOf = (plugin: WorkflowPlugin) => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new WorkflowStack(app, workflowStackName(plugin.def.manifest.name, 'dev'), { config: dev, plugin });
    return { stack, template: Template.fromStack(stack) };
  };
  const readOnly = stackOf({ def: loop, tools: { lookup }, codeSteps: {} });
  const tableIds = (template: Template) =>
    Object.keys(template.findResources('AWS::DynamoDB::Table'))
      .map((id) => id.replace(/[0-9A-F]{8}$/, ''))
      .sort();

  it('is named Stepwise-<Workflow>-<env>', () => {
    expect(readOnly.stack.stackName).toBe('Stepwise-Loop-dev');
    expect(workflowStackName('case-desk', 'prod')).toBe('Stepwise-CaseDesk-prod');
  });

  it('creates the tables its tools declare, and no idempotency or email table it does not need', () => {
    expect(tableIds(readOnly.template)).toEqual(['EventsTable', 'RecordsTable']);
    expect(readOnly.stack.idempotencyTable).toBeUndefined();
    expect(readOnly.stack.emailsTable).toBeUndefined();
    expect(readOnly.stack.ingress).toBeUndefined();
    readOnly.template.hasOutput('StateMachineArn', {});
  });

  it('grants a tool table only to the steps that have the tool, with the declared access', () => {
    const { template } = readOnly;
    const records = Object.keys(template.findResources('AWS::DynamoDB::Table')).find((id) =>
      id.startsWith('RecordsTable'),
    )!;
    for (const step of loop.steps) {
      const fnId = functionOfStep(template, step.name);
      const env = template.findResources('AWS::Lambda::Function')[fnId]!.Properties.Environment.Variables;
      const onRecords = statementsOfFunction(template, fnId)
        .filter((s) => JSON.stringify(s.Resource).includes(records))
        .flatMap(actionsOf);
      if (step.tools.includes('lookup')) {
        expect(env.RECORDS_TABLE).toEqual({ Ref: records });
        expect(onRecords).toContain('dynamodb:GetItem');
        expect(onRecords).not.toContain('dynamodb:PutItem');
      } else {
        expect(env.RECORDS_TABLE, step.name).toBeUndefined();
        expect(onRecords, step.name).toEqual([]);
      }
      expect(env.IDEMPOTENCY_TABLE).toBeUndefined();
    }
  });

  it('adds IdempotencyTable (TTL expiresAt) for a side-effecting tool, for the steps that call it', () => {
    const withRecord = loadWorkflowFrom(writeWorkflow('audited', ['lookup', 'record']));
    const { template } = stackOf({ def: withRecord, tools: { lookup, record }, codeSteps: {} });
    expect(tableIds(template)).toEqual(['AuditLogTable', 'EventsTable', 'IdempotencyTable', 'RecordsTable']);
    const idempotency = Object.entries(template.findResources('AWS::DynamoDB::Table')).find(([id]) =>
      id.startsWith('IdempotencyTable'),
    )!;
    expect(idempotency[1].Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    const env = (step: string) =>
      template.findResources('AWS::Lambda::Function')[functionOfStep(template, step)]!.Properties.Environment.Variables;
    expect(env('b-act')).toMatchObject({
      IDEMPOTENCY_TABLE: { Ref: idempotency[0] },
      AUDIT_LOG_TABLE: expect.anything(),
    });
    expect(env('a-plan').IDEMPOTENCY_TABLE).toBeUndefined();
  });
});
