/**
 * The token of an MCP server is granted to the steps whose tools call that server, and only to
 * them: `ssm:GetParameter` on its parameter, plus `secretsmanager:GetSecretValue` on a secret read
 * through `/aws/reference/secretsmanager/`; no KMS grant; cdk-nag stays clean.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { AgentWorkflow } from '../../src/cdk/constructs/agent-workflow.ts';
import { loadWorkflowFrom } from '../../src/definitions/workflow/loader.ts';
import type { WorkflowPlugin } from '../../src/runtime/plugin.ts';
import { defineTool } from '../../src/runtime/tools/types.ts';
import { fixtureEnv } from '../support/fixture-project.ts';
import { actionsOf, functionOfStep, type Json, statementsOfFunction } from './template.ts';

const root = mkdtempSync(join(tmpdir(), 'stepwise-mcp-grants-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function writeWorkflow(): string {
  const dir = join(root, 'desk');
  mkdirSync(join(dir, 'steps'), { recursive: true });
  writeFileSync(
    join(dir, 'workflow.yaml'),
    `name: desk
description: Tools from MCP servers with tokens.
version: 1.0.0
entry: a-tickets
fallback: d-hand-off
model: { id: base-model-v1 }
mcp:
  servers:
    tickets: { url: 'https://tickets.example.com/mcp', token: { ssm: /desk/tickets-token } }
    crm: { url: 'https://crm.example.com/mcp', token: { secret: desk/crm-token } }
    open: { url: 'https://open.example.com/mcp' }
  tools:
    open_ticket: { server: tickets }
    find_customer: { server: crm }
    search_docs: { server: open }
`,
  );
  const step = (name: string, fm: string) =>
    writeFileSync(
      join(dir, 'steps', `${name}.md`),
      `---\nname: ${name}\ndescription: Step ${name}.\nversion: 1.0.0\nkind: llm\n${fm}---\nDecide.\n`,
    );
  step('a-tickets', 'next: [b-crm]\ntools: [open_ticket]\n');
  step('b-crm', 'next: [c-docs]\ntools: [find_customer]\n');
  step('c-docs', 'next: [DONE]\ntools: [search_docs]\n');
  step('d-hand-off', 'next: [DONE]\n');
  return dir;
}

const def = loadWorkflowFrom(writeWorkflow());
const stub = (name: string) =>
  defineTool({ name, description: name, input: z.object({ q: z.string() }), run: async () => ({}) });
const plugin: WorkflowPlugin = {
  def,
  tools: { open_ticket: stub('open_ticket'), find_customer: stub('find_customer'), search_docs: stub('search_docs') },
  codeSteps: {},
};

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new Stack(app, 'Desk');
new AgentWorkflow(stack, 'Desk', { plugin, config: fixtureEnv('dev') });
const template = Template.fromStack(stack);

/** The step's statements that are not about its logs, traces, events or model. */
const tokenStatements = (step: string) =>
  statementsOfFunction(template, functionOfStep(template, step)).filter((s: Json) =>
    actionsOf(s).some((a) => /^(ssm|secretsmanager|kms):/.test(a)),
  );
const arn = (service: string, sep: string, name: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      `:${service}:`,
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      `${sep}${name}`,
    ],
  ],
});

describe('MCP credential grants', () => {
  it('grants the SSM parameter of its server to the step that calls it, and nothing more', () => {
    expect(tokenStatements('a-tickets')).toEqual([
      { Action: 'ssm:GetParameter', Effect: 'Allow', Resource: arn('ssm', ':parameter/', 'desk/tickets-token') },
    ]);
  });

  it('grants a Secrets Manager token through its SSM reference path and the secret itself', () => {
    expect(tokenStatements('b-crm')).toEqual([
      {
        Action: 'ssm:GetParameter',
        Effect: 'Allow',
        Resource: arn('ssm', ':parameter/', 'aws/reference/secretsmanager/desk/crm-token'),
      },
      {
        Action: 'secretsmanager:GetSecretValue',
        Effect: 'Allow',
        Resource: arn('secretsmanager', ':secret:', 'desk/crm-token-??????'),
      },
    ]);
  });

  it('grants no token to a step whose server has none, or that calls no server', () => {
    expect(tokenStatements('c-docs')).toEqual([]);
    expect(tokenStatements('d-hand-off')).toEqual([]);
  });

  it('leaves no unacknowledged cdk-nag finding', () => {
    const report = new AwsSolutionsChecks().validateScope(stack.node.findChild('Desk'));
    expect(report.violations.map((v) => `${v.ruleName} ${JSON.stringify(v)}`.slice(0, 300))).toEqual([]);
  });
});
