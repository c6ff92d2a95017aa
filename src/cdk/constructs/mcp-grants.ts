/**
 * What a step needs to read the credentials of the MCP servers its tools call: `ssm:GetParameter` on the
 * server's parameter and, for a Secrets Manager secret (read through SSM's
 * `/aws/reference/secretsmanager/` path), `secretsmanager:GetSecretValue` on that secret. Nothing
 * for a step whose tools reach no server with a credential. No `kms:Decrypt`: a SecureString or a secret
 * under the account's AWS managed key (`aws/ssm`, `aws/secretsmanager`) needs none; a customer
 * managed key is granted by the stack that owns it.
 */
import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import { credentialParameter } from '../../runtime/tools/mcp/credentials.ts';
import type { StepwiseFunction } from './stepwise-function.ts';

type CredentialSource = NonNullable<NonNullable<WorkflowDefinition['manifest']['mcp']>['servers'][string]['token']>;

/** The credentials of the servers the step's tools call, one per server. */
function stepCredentials(workflow: WorkflowDefinition, step: StepDefinition): CredentialSource[] {
  const mcp = workflow.manifest.mcp;
  if (!mcp) return [];
  const servers = new Set(step.tools.map((t) => mcp.tools[t]?.server).filter((s) => s !== undefined));
  return [...servers].flatMap((s) => (mcp.servers[s]?.token ? [mcp.servers[s].token] : []));
}

/** A secret by ARN as it is; by name, with the six characters Secrets Manager appends to every secret's ARN. */
function secretArn(stack: Stack, secret: string): string {
  if (secret.startsWith('arn:')) return secret;
  return stack.formatArn({
    service: 'secretsmanager',
    resource: 'secret',
    resourceName: `${secret}-??????`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}

/** Grant `fn` the reads of the MCP credentials its step's tools need (see the file comment). */
export function grantMcpCredentials(fn: StepwiseFunction, workflow: WorkflowDefinition, step: StepDefinition): void {
  const stack = Stack.of(fn);
  for (const token of stepCredentials(workflow, step)) {
    const parameter = credentialParameter(token).replace(/^\//, '');
    const resourceArns = [stack.formatArn({ service: 'ssm', resource: 'parameter', resourceName: parameter })];
    iam.Grant.addToPrincipal({ grantee: fn, actions: ['ssm:GetParameter'], resourceArns });
    if (!('secret' in token)) continue;
    const arn = secretArn(stack, token.secret);
    iam.Grant.addToPrincipal({ grantee: fn, actions: ['secretsmanager:GetSecretValue'], resourceArns: [arn] });
    if (arn.endsWith('-??????'))
      Validations.of(fn.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${token.secret}-??????]`,
        reason: "A secret's ARN ends in six characters Secrets Manager picks; the secret is named in the workflow.",
      });
  }
}
