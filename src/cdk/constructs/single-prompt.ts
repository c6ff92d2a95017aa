import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaAction, SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import type { StepDefinition } from '../../definitions/workflow/schema.ts';
import type { EnvConfig } from '../../project/config.ts';
import type { WorkflowPlugin } from '../../runtime/plugin.ts';
import { SINGLE_PROMPT_STEP, singlePromptStep } from '../../runtime/steps/single-prompt.ts';
import { STEP_ENTRY } from '../names.ts';
import { type FunctionAlarms, functionAlarms } from './alarms.ts';
import { failedExecutionsAlarm } from './resources.ts';
import { metricsNamespace, StepwiseFunction } from './stepwise-function.ts';

/** The rollback function's handler module. */
export const ROLLBACK_ENTRY = 'runtime/triggers/email/rollback-handler.ts';

export interface SinglePromptAgentProps {
  readonly plugin: WorkflowPlugin;
  readonly config: EnvConfig;
  /** The step workflow whose fallback and failure rate the rollback watches. */
  readonly stepWorkflow: sfn.IStateMachine;
  /** Grants the single-prompt function what every tool of the manifest declares (it may call them all). */
  readonly bindStep: (step: StepDefinition, fn: StepwiseFunction) => void;
  /** Notified when the rollback alarm fires. @default nobody */
  readonly alarmTopic?: sns.ITopic;
}

/**
 * The dual mode of an email workflow with manifest `singlePrompt`: the single-prompt
 * agent (a state machine of one Task: the whole workflow as one LLM step, every tool), the SSM
 * parameter the ingress reads to choose between it and the step workflow (`steps` |
 * `single-prompt`, from the config's `orchestration.useStepOrchestrator`), and the rollback: an
 * alarm on (fallback hand-offs + failed executions) / executions started of the step workflow over
 * the configured window, whose action is a function that sets the parameter to `single-prompt`.
 *
 * Why SSM and not AppConfig: the switch is one string read on each mail (cached 30 s) and written
 * by one PutParameter from the alarm's function; AppConfig would add a deployment per flip (with
 * its own bake time) and a Lambda extension or agent for the read, for a flag with two values.
 */
export class SinglePromptAgent extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly function: StepwiseFunction;
  readonly parameter: ssm.StringParameter;
  readonly rollbackAlarm: cloudwatch.Alarm;
  readonly rollbackFunction: StepwiseFunction;
  readonly failedExecutionsAlarm: cloudwatch.Alarm;
  /** Errors and throttles of the single-prompt function and of the rollback function. */
  readonly functionAlarms: { readonly singlePrompt: FunctionAlarms; readonly rollback: FunctionAlarms };

  constructor(scope: Construct, id: string, props: SinglePromptAgentProps) {
    super(scope, id);
    const { plugin, config, alarmTopic: topic } = props;
    const { manifest } = plugin.def;
    this.function = this.createFunction(props);
    this.stateMachine = this.createStateMachine(manifest.name, config);
    const failed = `${manifest.name} (${config.name}): executions of the single-prompt agent failed.`;
    this.failedExecutionsAlarm = failedExecutionsAlarm(this, this.stateMachine, config, failed, topic);

    this.parameter = new ssm.StringParameter(this, 'Mode', {
      parameterName: `/stepwise/${config.name}/${manifest.name}/orchestration`,
      stringValue: config.orchestration.useStepOrchestrator ? 'steps' : 'single-prompt',
      description: `${manifest.name}: where inbound mail goes - steps (the step workflow) or single-prompt (the single-prompt agent); the rollback alarm sets single-prompt`,
    });
    this.rollbackFunction = this.createRollbackFunction(manifest.name, config);
    this.rollbackAlarm = this.createRollbackAlarm(props);
    const agent = `${manifest.name} single-prompt agent`;
    const rollback = `${manifest.name} orchestration rollback`;
    this.functionAlarms = {
      singlePrompt: functionAlarms(this, 'Function', this.function, config, agent, topic),
      // A rollback that fails leaves mail on the failing step workflow: someone must know.
      rollback: functionAlarms(this, 'Rollback', this.rollbackFunction, config, rollback, topic),
    };
  }

  /** The function that runs the whole workflow as one LLM step, granted the model and every tool of the manifest. */
  private createFunction({ plugin, config, bindStep }: SinglePromptAgentProps): StepwiseFunction {
    const { manifest } = plugin.def;
    const modelId = config.modelId ?? manifest.model.id;
    const fn = new StepwiseFunction(this, 'Function', {
      entry: STEP_ENTRY,
      config,
      serviceName: manifest.name,
      workflowDir: plugin.def.dir,
      description: `${manifest.name}: the single-prompt agent (the whole workflow in one LLM step)`,
      timeout: Duration.minutes(5),
      environment: {
        WORKFLOW: manifest.name,
        STEP: SINGLE_PROMPT_STEP,
        MODEL_ID: modelId,
        MODEL_PROVIDER: config.modelProvider,
        STEP_OUTPUT: config.executionDataInLogs ? 'full' : 'summary',
      },
    });
    if (config.modelProvider === 'bedrock') fn.grantInvokeModel(modelId);
    bindStep(singlePromptStep(plugin.def), fn);
    return fn;
  }

  /** A state machine of one Task (the function, retried on transient errors): `Done`, or `SinglePromptFailed`. */
  private createStateMachine(workflow: string, config: EnvConfig): sfn.StateMachine {
    const task = new tasks.LambdaInvoke(this, SINGLE_PROMPT_STEP, {
      lambdaFunction: this.function,
      payloadResponseOnly: true,
      payload: sfn.TaskInput.fromObject({
        workflow,
        step: SINGLE_PROMPT_STEP,
        input: sfn.JsonPath.objectAt('$'),
        previous: {
          step: null,
          next: SINGLE_PROMPT_STEP,
          reason: 'start',
          decidedBy: null,
          fields: {},
          data: {},
          count: 0,
        },
        error: null,
        count: 1,
        execution: { id: sfn.JsonPath.executionId, name: sfn.JsonPath.executionName },
      }),
      resultSelector: { next: sfn.JsonPath.stringAt('$.next'), reason: sfn.JsonPath.stringAt('$.reason') },
    });
    task.addRetry({
      errors: ['ModelThrottledError', 'ModelTimeoutError', 'ToolUnavailableError'],
      interval: Duration.seconds(2),
      maxAttempts: 3,
      backoffRate: 2,
      jitterStrategy: sfn.JitterType.FULL,
    });
    const logGroup = new logs.LogGroup(this, 'ExecutionLogs', {
      retention: config.logRetention,
      removalPolicy: config.removalPolicy,
    });
    const stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromChainable(
        task
          .addCatch(new sfn.Fail(this, 'SinglePromptFailed', { error: 'SinglePromptFailed' }))
          .next(new sfn.Succeed(this, 'Done')),
      ),
      stateMachineType: sfn.StateMachineType.STANDARD,
      tracingEnabled: true,
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: config.executionDataInLogs },
    });
    const role = Validations.of(stateMachine.role);
    role.acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'CloudWatch Logs delivery and X-Ray support no resource-level permissions.',
    });
    role.acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(this.function.node.defaultChild as lambda.CfnFunction)}.Arn>:*]`,
      reason: 'lambda:InvokeFunction on the single-prompt function and its versions only.',
    });
    return stateMachine;
  }

  /** The function the rollback alarm invokes: it sets the orchestration parameter to `single-prompt`. */
  private createRollbackFunction(workflow: string, config: EnvConfig): StepwiseFunction {
    const fn = new StepwiseFunction(this, 'Rollback', {
      entry: ROLLBACK_ENTRY,
      config,
      serviceName: 'stepwise-rollback',
      description: `${workflow}: flips inbound mail to the single-prompt agent when the step workflow's failure rate alarms`,
      timeout: Duration.seconds(30),
      environment: { ORCHESTRATION_PARAMETER: this.parameter.parameterName },
    });
    this.parameter.grantRead(fn);
    this.parameter.grantWrite(fn);
    return fn;
  }

  /** Raised when (fallback hand-offs + failed executions) / executions started of the step workflow pass the rate. */
  private createRollbackAlarm({ plugin, config, stepWorkflow, alarmTopic }: SinglePromptAgentProps): cloudwatch.Alarm {
    const { manifest } = plugin.def;
    const { failureRatePercent, windowMinutes, minExecutions } = config.orchestration.rollback;
    const period = Duration.minutes(windowMinutes);
    const rate = new cloudwatch.MathExpression({
      // Below minExecutions a few failures are not a rate: 0.
      expression: `IF(started >= ${minExecutions}, 100 * (failed + handoffs) / started, 0)`,
      usingMetrics: {
        started: stepWorkflow.metricStarted({ period, statistic: cloudwatch.Stats.SUM }),
        failed: stepWorkflow.metricFailed({ period, statistic: cloudwatch.Stats.SUM }),
        handoffs: new cloudwatch.Metric({
          namespace: metricsNamespace(config),
          metricName: 'FallbackHandoff',
          dimensionsMap: { service: manifest.name, workflow: manifest.name, step: manifest.fallback },
          period,
          statistic: cloudwatch.Stats.SUM,
        }),
      },
      period,
      label: 'step workflow fallback and failure rate, %',
    });
    const alarm = new cloudwatch.Alarm(this, 'RollbackAlarm', {
      metric: rate,
      threshold: failureRatePercent,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `${manifest.name} (${config.name}): more than ${failureRatePercent}% of step-workflow executions fell back or failed over ${windowMinutes} min: inbound mail was switched to the single-prompt agent (${this.parameter.parameterName}). Runbook: docs/guides/operating.md#rolling-back-to-the-single-prompt-agent.`,
    });
    alarm.addAlarmAction(new LambdaAction(this.rollbackFunction));
    if (alarmTopic) alarm.addAlarmAction(new SnsAction(alarmTopic));
    return alarm;
  }
}
