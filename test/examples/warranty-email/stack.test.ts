/**
 * The warranty-email workflow's stack (WorkflowStack): tables from its tools, one least-privilege function per step,
 * cdk-nag clean (the ingress has its own tests).
 */
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { loadPlugin } from '../../../src/runtime/plugin.ts';
import { actionsOf, functionOfStep, type Json, stateMachineOf, statementsOfFunction } from '../../support/app.ts';
import { synthApp } from '../support/app.ts';
import { exampleEnv } from '../support/config.ts';

const { app, stacks, template } = synthApp('dev');
const config = exampleEnv('dev');
const plugin = await loadPlugin('warranty-email');
const { steps, manifest } = plugin.def;
const tables = template.findResources('AWS::DynamoDB::Table');
const functions = template.findResources('AWS::Lambda::Function');
const tableId = (prefix: string) => Object.keys(tables).find((id) => id.startsWith(prefix))!;

/** Statements of a step's role that mention a resource whose JSON contains `needle`. */
function statementsOn(step: string, needle: string): Json[] {
  return statementsOfFunction(template, functionOfStep(template, step)).filter((s) =>
    JSON.stringify(s.Resource).includes(needle),
  );
}
const hasAction = (step: string, action: string, needle = '') =>
  statementsOn(step, needle).some((s) => actionsOf(s).includes(action));
const stepsWithTool = (tool: string) => steps.filter((s) => s.tools.includes(tool)).map((s) => s.name);
/** Steps calling a side-effecting tool: only they remember results in IdempotencyTable. */
const hasIdempotentTool = (step: (typeof steps)[number]) =>
  step.tools.some((t) => plugin.tools[t]!.idempotency !== undefined);
/** LLM steps that read the untrusted input: only they read the stored email bodies. */
const readsEmail = (step: (typeof steps)[number]) => step.kind === 'llm' && step.readsUntrusted;

describe('WorkflowStack (warranty-email)', () => {
  it('is named after the environment', () => {
    expect(stacks.workflows['warranty-email']!.stackName).toBe('Stepwise-WarrantyEmail-dev');
    expect(Object.keys(stacks.workflows)).toContain('warranty-email');
  });

  it('has the five tables: string pk/sk, on demand, PITR, AWS-managed encryption, TTL on idempotency', () => {
    // The tools declare `warranty` and `tickets`; side-effecting tools need IdempotencyTable; the email trigger
    // EmailsTable.
    expect(Object.keys(stacks.workflows['warranty-email']!.tables).sort()).toEqual(['tickets', 'warranty']);
    expect(
      Object.keys(tables)
        .map((id) => id.replace(/[0-9A-F]{8}$/, ''))
        .sort(),
    ).toEqual(['EmailsTable', 'EventsTable', 'IdempotencyTable', 'TicketsTable', 'WarrantyTable']);
    for (const table of Object.values(tables)) {
      expect(table.Properties).toMatchObject({
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
      });
      expect(table.DeletionPolicy).toBe('Delete');
    }
    expect(tables[tableId('IdempotencyTable')]!.Properties.TimeToLiveSpecification).toEqual({
      AttributeName: 'expiresAt',
      Enabled: true,
    });
  });

  it('has one function per step, each with stepwise:entry metadata, WORKFLOW and STEP', () => {
    // The single-prompt agent (manifest singlePrompt, dual mode) runs the handler too, as step `monolithic`.
    const stepFunctions = Object.values(functions).filter(
      (fn) =>
        fn.Properties.Environment.Variables.WORKFLOW === manifest.name &&
        fn.Properties.Environment.Variables.STEP !== 'monolithic',
    );
    expect(stepFunctions.map((fn) => fn.Properties.Environment.Variables.STEP).sort()).toEqual(
      steps.map((s) => s.name).sort(),
    );
    for (const step of steps) {
      const fn = functions[functionOfStep(template, step.name)]!;
      expect(fn.Metadata['stepwise:entry']).toBe('runtime/step-handler/handler.ts');
      expect(fn.Properties.Environment.Variables).toMatchObject({
        WORKFLOW: manifest.name,
        STEP: step.name,
        STATEMACHINES_DIR: '/var/task/statemachines',
        MODEL_ID: config.modelId ?? manifest.model.id,
        MODEL_PROVIDER: 'bedrock',
        POWERTOOLS_SERVICE_NAME: manifest.name,
        POWERTOOLS_LOG_LEVEL: config.logLevel,
        EVENTS_TABLE: { Ref: tableId('EventsTable') },
      });
      // Least privilege: a step sees only the tables it uses.
      const vars = fn.Properties.Environment.Variables;
      // Source maps ship (and are turned on) only where the environment sets sourceMaps.
      expect(vars.NODE_OPTIONS, step.name).toBeUndefined();
      expect(vars.IDEMPOTENCY_TABLE, step.name).toEqual(
        hasIdempotentTool(step) ? { Ref: tableId('IdempotencyTable') } : undefined,
      );
      expect(vars.EMAILS_TABLE, step.name).toEqual(readsEmail(step) ? { Ref: tableId('EmailsTable') } : undefined);
      expect(vars.TICKETS_TABLE, step.name).toEqual(
        step.tools.includes('create_ticket') ? { Ref: tableId('TicketsTable') } : undefined,
      );
      expect(vars.WARRANTY_TABLE, step.name).toEqual(
        step.tools.includes('check_warranty') ? { Ref: tableId('WarrantyTable') } : undefined,
      );
    }
  });

  it('uses the project function defaults: Node.js 22 on ARM64, ESM handler, X-Ray, own log group', () => {
    for (const fn of Object.values(functions)) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        TracingConfig: { Mode: 'Active' },
      });
    }
    const logGroups = Object.values(functions).map((fn) => fn.Properties.LoggingConfig.LogGroup.Ref);
    expect(new Set(logGroups).size).toBe(Object.keys(functions).length);
    expect(Object.keys(template.findResources('AWS::Logs::LogGroup'))).toEqual(expect.arrayContaining(logGroups));
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: config.logRetention });
  });

  it('lets only LLM steps invoke the pinned model, and nothing else of Bedrock', () => {
    for (const step of steps) {
      const bedrock = statementsOfFunction(template, functionOfStep(template, step.name)).filter((s) =>
        actionsOf(s).some((a) => a.startsWith('bedrock:')),
      );
      if (step.kind === 'code') {
        expect(bedrock, step.name).toEqual([]);
        continue;
      }
      expect(bedrock, step.name).toHaveLength(1);
      expect(actionsOf(bedrock[0]!)).toEqual(['bedrock:InvokeModel']);
      // An inference profile id (`us.` ...) is granted with the foundation model it routes to.
      expect(JSON.stringify(bedrock[0]!.Resource)).toContain(
        `:foundation-model/${(config.modelId ?? manifest.model.id).replace(/^(us|eu|apac|global)\./, '')}`,
      );
    }
  });

  it('grants table access per tool: only check_warranty steps read WarrantyTable, only create_ticket steps write TicketsTable', () => {
    expect(stepsWithTool('create_ticket')).toEqual(['03a-valid-warranty']);
    for (const step of steps) {
      expect(hasAction(step.name, 'dynamodb:PutItem', tableId('TicketsTable')), step.name).toBe(
        step.tools.includes('create_ticket'),
      );
      expect(hasAction(step.name, 'dynamodb:GetItem', tableId('WarrantyTable')), step.name).toBe(
        step.tools.includes('check_warranty'),
      );
      expect(hasAction(step.name, 'dynamodb:PutItem', tableId('EventsTable')), step.name).toBe(true);
      expect(hasAction(step.name, 'dynamodb:GetItem', tableId('EventsTable')), step.name).toBe(false);
      // The final summary lists the execution's StepCompleted events.
      expect(hasAction(step.name, 'dynamodb:Query', tableId('EventsTable')), step.name).toBe(true);
      // The event log is append-only: PutItem and Query, nothing else.
      expect(statementsOn(step.name, tableId('EventsTable')).flatMap(actionsOf).sort(), step.name).toEqual([
        'dynamodb:PutItem',
        'dynamodb:Query',
      ]);
      expect(hasAction(step.name, 'dynamodb:PutItem', tableId('IdempotencyTable')), step.name).toBe(
        hasIdempotentTool(step),
      );
      expect(hasAction(step.name, 'dynamodb:GetItem', tableId('IdempotencyTable')), step.name).toBe(
        hasIdempotentTool(step),
      );
      // Only LLM steps reading the untrusted input read the bodies, with GetItem only.
      expect(statementsOn(step.name, tableId('EmailsTable')).flatMap(actionsOf), step.name).toEqual(
        readsEmail(step) ? ['dynamodb:GetItem'] : [],
      );
    }
    expect(
      steps
        .filter(hasIdempotentTool)
        .map((s) => s.name)
        .sort(),
    ).toEqual([
      '03a-valid-warranty',
      '03b-device-not-found',
      '03c-expired-warranty',
      '03d-request-serial',
      '04-out-of-scope',
      '05-send-confirmation',
    ]);
    expect(steps.filter((s) => !readsEmail(s)).map((s) => s.name)).toEqual(['02-check-warranty', '04-out-of-scope']);
  });

  it('lets only send_email steps send mail, and only from the configured address', () => {
    expect(hasAction('01-extract-serial', 'ses:SendEmail')).toBe(false);
    expect(hasAction('02-check-warranty', 'ses:SendEmail')).toBe(false);
    for (const step of steps) {
      const ses = statementsOfFunction(template, functionOfStep(template, step.name)).filter((s) =>
        actionsOf(s).some((a) => a.startsWith('ses:')),
      );
      const env = functions[functionOfStep(template, step.name)]!.Properties.Environment.Variables;
      if (!step.tools.includes('send_email')) {
        expect(ses, step.name).toEqual([]);
        expect(env.MAIL_FROM).toBeUndefined();
        continue;
      }
      expect(ses).toHaveLength(1);
      expect(ses[0]!.Action).toBe('ses:SendEmail');
      expect(ses[0]!.Condition).toEqual({ StringEquals: { 'ses:FromAddress': config.email!.mailFrom } });
      expect(JSON.stringify(ses[0]!.Resource)).toContain(`:identity/${config.email!.mailFrom}`);
      expect(env.MAIL_FROM).toBe(config.email!.mailFrom);
    }
  });

  it('lets no step role use a wildcard outside its dedicated X-Ray policy', () => {
    for (const step of steps) {
      const wildcards = statementsOfFunction(template, functionOfStep(template, step.name)).filter(
        (s) => s.Resource === '*',
      );
      expect(wildcards.map(actionsOf)).toEqual([['xray:PutTraceSegments', 'xray:PutTelemetryRecords']]);
    }
  });

  it('lets the state machine invoke exactly the step functions', () => {
    const roleId = stateMachineOf(template).resource.Properties.RoleArn['Fn::GetAtt'][0];
    const invoked = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => p.Properties.Roles.some((r: Json) => r.Ref === roleId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Json[])
      .filter((s) => actionsOf(s).includes('lambda:InvokeFunction'))
      .flatMap((s) => s.Resource as Json[])
      .filter((r) => r['Fn::GetAtt'])
      .map((r) => r['Fn::GetAtt'][0]);
    expect(invoked.sort()).toEqual(steps.map((s) => functionOfStep(template, s.name)).sort());
  });

  it('passes cdk-nag AwsSolutions with no unacknowledged error or warning', () => {
    const report = new AwsSolutionsChecks().validateScope(app);
    const findings = report.violations.map(
      (v) =>
        `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath ?? r.resourceLogicalId).join(', ')}`,
    );
    expect(findings).toEqual([]);
  });
});
