/**
 * The options every command that touches a deployment environment or AWS shares, as the CDK and
 * SAM CLIs name them: `--env NAME` (the `-c env=NAME` of `cdk synth`), `--profile NAME` and
 * `--region REGION` (the AWS CLI's). Profile and region are applied to the process before the
 * command runs, so every AWS SDK client of the command (and of its local step handlers) uses them.
 */
import { type Command, Option } from 'commander';

/** `--env NAME`: the deployment environment of stepwise.config.ts (default dev). */
export const envOption = (what: string) =>
  new Option('--env <name>', `deployment environment (${what}; as cdk synth -c env=NAME)`).default('dev');

/**
 * `--profile NAME` and `--region REGION` on `command`, applied before its action.
 * @param what what they are for, in the help (`for --model bedrock`).
 * @param regionDefault where the region comes from without `--region`, in the help.
 */
export function awsOptions(command: Command, what: string, regionDefault = 'AWS_REGION'): Command {
  return command
    .option('--profile <name>', `AWS profile ${what} (default: AWS_PROFILE, else the default profile)`)
    .option('--region <region>', `AWS region ${what} (default: ${regionDefault})`)
    .hook('preAction', (_command, action) => {
      const { profile, region } = action.opts<{ profile?: string; region?: string }>();
      if (profile) process.env.AWS_PROFILE = profile;
      if (region) process.env.AWS_REGION = region;
    });
}
