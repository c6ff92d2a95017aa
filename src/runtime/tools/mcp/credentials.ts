/**
 * An MCP server's credential (the bearer token its manifest's `token` names), read when the server is first connected: from an SSM SecureString,
 * or from Secrets Manager through SSM's `/aws/reference/secretsmanager/` path (one client for both,
 * and the Lambda runtime ships it). The credential never sits in a definition file or an environment variable.
 */
import type { Env } from '../../../core/env.ts';
import { ToolUnavailableError } from '../../../core/errors.ts';
import type { McpServer } from '../../../definitions/workflow/mcp.ts';
import type { AwsClients } from '../types.ts';

type CredentialSource = NonNullable<McpServer['token']>;

/** The SSM parameter name a credential is read from. */
export const credentialParameter = (source: CredentialSource): string =>
  'ssm' in source ? source.ssm : `/aws/reference/secretsmanager/${source.secret}`;

/** Read the credential; a failure is ToolUnavailableError, so the step is retried rather than run without it. */
export async function readCredential(source: CredentialSource, env: Env, aws: AwsClients): Promise<string> {
  const name = credentialParameter(source);
  try {
    // Loaded only by functions whose MCP server has a token.
    const { SSMClient, GetParameterCommand } = await import('@aws-sdk/client-ssm');
    const ssm = aws.traced(new SSMClient({ region: aws.region, endpoint: env.AWS_ENDPOINT_URL_SSM }));
    const out = await ssm.send(new GetParameterCommand({ Name: name, WithDecryption: true }));
    if (!out.Parameter?.Value) throw new Error('the parameter has no value');
    return out.Parameter.Value;
  } catch (e) {
    throw new ToolUnavailableError(`the MCP credential ${name} could not be read: ${(e as Error).message}`, {
      cause: e,
    });
  }
}
