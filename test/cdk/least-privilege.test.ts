/**
 * Least privilege, proven by absence as well as presence: each role of the warranty stack may do
 * what its step's tools declare and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { synthProject } from '../../src/local/cloud/synth.ts';

const template = (await synthProject('dev')).templates['Stepwise-WarrantyEmail-dev']!;
const resources = template.Resources!;

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
  extract: 'WorkflowSteps01extractserial',
  check: 'WorkflowSteps02checkwarranty',
  ticket: 'WorkflowSteps03avalidwarranty',
  notFound: 'WorkflowSteps03bdevicenotfound',
  fallback: 'WorkflowSteps04outofscope',
  confirm: 'WorkflowSteps05sendconfirmation',
};

describe('the warranty stack grants', () => {
  it('the step that reads the untrusted email no way to send mail, write tickets or use the idempotency table', () => {
    expect(allowed(STEPS.extract, 'ses:SendEmail')).toBe(false);
    expect(allowed(STEPS.extract, 'dynamodb:PutItem', 'TicketsTable')).toBe(false);
    expect(grants(STEPS.extract).some((g) => g.resources.includes('IdempotencyTable'))).toBe(false);
    expect(allowed(STEPS.extract, 'dynamodb:GetItem', 'EmailsTable')).toBe(true);
  });

  it('ticket writes to the ticket step only', () => {
    for (const [name, prefix] of Object.entries(STEPS))
      expect(allowed(prefix, 'dynamodb:PutItem', 'TicketsTable'), name).toBe(name === 'ticket');
  });

  it('mail sending to the steps whose tools send mail only', () => {
    for (const [name, prefix] of Object.entries(STEPS))
      expect(allowed(prefix, 'ses:SendEmail'), name).toBe(['notFound', 'fallback', 'confirm'].includes(name));
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
    expect(grants(STEPS.check).some((g) => g.resources.includes('IdempotencyTable'))).toBe(false);
    expect(allowed(STEPS.ticket, 'dynamodb:PutItem', 'IdempotencyTable')).toBe(true);
  });

  it('code steps no model access; the ingress only conditional puts and no mail', () => {
    for (const prefix of [STEPS.check, STEPS.fallback]) expect(allowed(prefix, 'bedrock:InvokeModel')).toBe(false);
    const ingress = grants('EmailIngressFunction');
    expect(ingress.filter((g) => g.action.startsWith('dynamodb:')).map((g) => g.action)).toEqual([
      'dynamodb:PutItem',
      'dynamodb:PutItem',
    ]);
    expect(ingress.some((g) => g.action.startsWith('ses:'))).toBe(false);
  });
});
