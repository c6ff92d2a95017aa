/**
 * Least privilege, proven by absence as well as presence: each role of an email workflow's stack (the fixture
 * project's case-desk) may do what its step's tools declare and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { type Json, synthApp } from './template.ts';

const resources: Record<string, Json> = synthApp('dev').template.toJSON().Resources;

/** Every action a role's policies allow, with the logical ids of the resources they name. */
function grants(rolePrefix: string): { action: string; resources: string }[] {
  const policies = Object.entries(resources).filter(
    ([id, r]) => r.Type === 'AWS::IAM::Policy' && id.startsWith(rolePrefix),
  );
  expect(policies.length, `policies of ${rolePrefix}`).toBeGreaterThan(0);
  return policies.flatMap(([, r]) =>
    (r.Properties as any).PolicyDocument.Statement.flatMap((s: any) =>
      [s.Action].flat().map((action: string) => ({ action, resources: JSON.stringify(s.Resource) })),
    ),
  );
}

const allowed = (prefix: string, action: string, table?: string) =>
  grants(prefix).some((g) => g.action === action && (table === undefined || g.resources.includes(table)));

const STEPS = {
  read: 'WorkflowSteps01readrequest',
  lookUp: 'WorkflowSteps02lookup',
  open: 'WorkflowSteps03aopencase',
  notFound: 'WorkflowSteps03bnotfound',
  askRef: 'WorkflowSteps03caskref',
  fallback: 'WorkflowSteps04handoff',
  confirm: 'WorkflowSteps05confirm',
};

describe('the email workflow stack grants', () => {
  it('the step that reads the untrusted email no way to send mail, write cases or use the idempotency table', () => {
    expect(allowed(STEPS.read, 'ses:SendEmail')).toBe(false);
    expect(allowed(STEPS.read, 'dynamodb:PutItem', 'CasesTable')).toBe(false);
    expect(grants(STEPS.read).some((g) => g.resources.includes('IdempotencyTable'))).toBe(false);
    expect(allowed(STEPS.read, 'dynamodb:GetItem', 'EmailsTable')).toBe(true);
  });

  it('case writes to the step that opens cases only, case reads to the step that looks them up only', () => {
    for (const [name, prefix] of Object.entries(STEPS)) {
      expect(allowed(prefix, 'dynamodb:PutItem', 'CasesTable'), name).toBe(name === 'open');
      expect(allowed(prefix, 'dynamodb:GetItem', 'CasesTable'), name).toBe(name === 'lookUp');
    }
  });

  it('mail sending to the steps whose tools send mail only', () => {
    for (const [name, prefix] of Object.entries(STEPS))
      expect(allowed(prefix, 'ses:SendEmail'), name).toBe(['notFound', 'askRef', 'fallback', 'confirm'].includes(name));
  });

  it('no step a Scan of the emails table, or an update or delete in the append-only events table', () => {
    for (const prefix of Object.values(STEPS)) {
      expect(allowed(prefix, 'dynamodb:Scan', 'EmailsTable')).toBe(false);
      for (const action of ['dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'])
        expect(allowed(prefix, action, 'EventsTable')).toBe(false);
      expect(allowed(prefix, 'dynamodb:PutItem', 'EventsTable')).toBe(true);
    }
  });

  it('the idempotency table only to steps with side-effecting tools', () => {
    expect(grants(STEPS.lookUp).some((g) => g.resources.includes('IdempotencyTable'))).toBe(false);
    expect(allowed(STEPS.open, 'dynamodb:PutItem', 'IdempotencyTable')).toBe(true);
  });

  it('code steps no model access; the ingress only conditional puts and no mail', () => {
    for (const prefix of [STEPS.lookUp, STEPS.fallback]) expect(allowed(prefix, 'bedrock:InvokeModel')).toBe(false);
    const ingress = grants('EmailIngressFunction');
    expect(ingress.filter((g) => g.action.startsWith('dynamodb:')).map((g) => g.action)).toEqual([
      'dynamodb:PutItem',
      'dynamodb:PutItem',
    ]);
    expect(ingress.some((g) => g.action.startsWith('ses:'))).toBe(false);
  });
});
