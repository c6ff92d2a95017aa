import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { TRANSIENT_ERRORS } from '../../core/errors.ts';
import { workflowScopes } from '../../definitions/workflow/constructs/scopes.ts';
import type { StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import { DONE } from '../../definitions/workflow/schema.ts';
import type { EnvConfig } from '../../project/config.ts';
import type { WorkflowPlugin } from '../../runtime/plugin.ts';
import { WORKFLOW_METADATA } from '../metadata.ts';
import { STEP_ENTRY, workflowStateMachineName } from '../names.ts';
import { ALARM_PERIOD, countAlarm, type FunctionAlarms, functionAlarms } from './alarms.ts';
import { stepStates } from './compile/chain.ts';
import { consensusStates, finalVotePayload, type StepTaskKit } from './compile/consensus.ts';
import { CounterGates, startCounters } from './compile/counters.ts';
import { type CompileKit, routeStateName } from './compile/kit.ts';
import { EventWaits } from './event-waits.ts';
import { grantMcpCredentials } from './mcp-grants.ts';
import { pauseStates, resumePolicy } from './pause.ts';
import { failedExecutionsAlarm } from './resources.ts';
import { metricsNamespace, StepwiseFunction } from './stepwise-function.ts';

/** Names of the terminal states. Step names are lower-case, so they never collide with these. */
export const TERMINAL_STATES = {
  done: 'Done',
  maxStepsExceeded: 'MaxStepsExceeded',
  fallbackFailed: 'FallbackFailed',
  routeRejected: 'RouteRejected',
} as const;
/** The Pass state the circuit breaker goes through to hand the execution to the fallback. */
export const MAX_STEPS_HANDOFF = 'MaxStepsHandoff';
export { routeStateName };

/** The `Comment` of a step's Task state: what the step does and what kind of step it is. */
export function stepComment(step: StepDefinition): string {
  const kind =
    step.kind === 'llm'
      ? 'LLM step'
      : step.handler
        ? `code step (${step.handler})`
        : `${step.kind} step, joining its ${step.kind === 'map' ? 'items' : 'branches'}`;
  return `${step.description} [${kind}, v${step.version}${step.consensus ? ', final consensus vote' : ''}]`;
}

/** Errors of the Lambda service itself (not of the handler): retried like CDK's LambdaInvoke default. */
const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
  'Lambda.ClientExecutionTimeoutException',
];
// An LLM step may call the model several times in its tool loop; code steps make one tool call.
const LLM_STEP_TIMEOUT = Duration.minutes(2);
const CODE_STEP_TIMEOUT = Duration.seconds(30);

export interface AgentWorkflowProps {
  /** The loaded and validated workflow with its code (`loadPlugin(name)`): its tools' declared resources decide the grants. */
  readonly plugin: WorkflowPlugin;
  readonly config: EnvConfig;
  /**
   * Called once per step with its function, so the stack grants each step exactly what its
   * declared `tools` need (`fn.bindTable(...)`, `fn.bindEmailSender(...)`; see `WorkflowStack`).
   * @default no grants beyond the model (LLM steps) and the step's own log group
   */
  readonly bindStep?: (step: StepDefinition, fn: StepwiseFunction) => void;
  /** Notified when the failed-executions alarm fires. @default the alarm notifies nobody */
  readonly alarmTopic?: sns.ITopic;
  /**
   * The state machine name of another workflow of the project, for its `workflow` steps.
   * @default `<this stack's name>-<workflow>`: the workflow compiled into the same stack
   */
  readonly childStateMachineName?: (workflow: string) => string;
}

/**
 * An agent workflow compiled to a Standard Step Functions state machine (the ASL contract):
 * `Start` (Pass) → one Task per step, named as the step, invoking that step's own Lambda → a
 * Choice `<step>.route` whose rules are the step-count circuit breaker (→ `MaxStepsHandoff` → the
 * fallback, with the reason in `$.error`) and exactly the step's declared edges, with Default → the
 * fallback step. Transient errors are retried with backoff and
 * full jitter; anything else is caught to the fallback (the fallback's own failures end in
 * `FallbackFailed`, its invalid routes in `RouteRejected`).
 *
 * Manifest `counters` add a Choice and a Pass before the steps that change them (the cap ends in
 * the counter's named outcome, see `compile/counters.ts`); a step with `consensus` is entered
 * through its waves of inline Map states and tallies (`compile/consensus.ts`).
 *
 * Each step gets its own function and role: LLM steps may invoke the pinned model only, code
 * steps have no Bedrock permission, and tool permissions come from `bindStep`.
 *
 * @example
 * const wf = new AgentWorkflow(this, 'Workflow', { plugin: await loadPlugin('support-triage'), config });
 * wf.grantStartExecution(caller);
 */
export class AgentWorkflow extends Construct {
  readonly workflow: WorkflowDefinition;
  /** The pinned model id the LLM steps call (config override, else the manifest's). */
  readonly modelId: string;
  readonly stateMachine: sfn.StateMachine;
  /** One function per step, keyed by step name. */
  readonly functions: Readonly<Record<string, StepwiseFunction>>;
  /** Execution history log group (level ALL, execution data included). */
  readonly logGroup: logs.LogGroup;
  readonly failedExecutionsAlarm: cloudwatch.Alarm;
  /** Raised when the fallback step hands too many executions to a person (the `FallbackHandoff` metric). */
  readonly handoffsAlarm: cloudwatch.Alarm;
  /** When a step pauses: the policy to attach to whoever resumes checkpoints (`SendTaskSuccess`/`Failure`/`Heartbeat` on this state machine). */
  readonly resumePolicy?: iam.ManagedPolicy;
  /** Errors and throttles of each step's function, by step name. */
  readonly functionAlarms: Readonly<Record<string, FunctionAlarms>>;
  /** Raised when executions time out (`ExecutionsTimedOut`, at the failed-executions threshold). */
  readonly timedOutExecutionsAlarm: cloudwatch.Alarm;
  /** Raised when the model throttles this workflow's calls (`ModelThrottled`, emitted by the step handler); only when a step calls the model on Bedrock. */
  readonly modelThrottledAlarm?: cloudwatch.Alarm;

  private readonly childStateMachineName?: (workflow: string) => string;
  /** When a step waits for an outside event: its token table, registering function and resumer. */
  readonly eventWaits?: EventWaits;

  constructor(scope: Construct, id: string, props: AgentWorkflowProps) {
    super(scope, id);
    this.childStateMachineName = props.childStateMachineName;
    const { config, alarmTopic: topic } = props;
    const workflow = props.plugin.def;
    const { manifest } = workflow;
    this.workflow = workflow;
    this.modelId = config.modelId ?? manifest.model.id;

    this.functions = this.createStepFunctions(props);
    if (workflow.steps.some((s) => s.event)) this.eventWaits = new EventWaits(this, 'EventWaits', { workflow, config });
    this.logGroup = new logs.LogGroup(this, 'ExecutionLogs', {
      retention: config.logRetention,
      removalPolicy: config.removalPolicy,
    });
    this.stateMachine = this.createStateMachine(config);
    if (workflow.steps.some((s) => s.pause)) this.resumePolicy = resumePolicy(this, this.stateMachine);
    this.eventWaits?.addResumer(this.stateMachine);

    this.failedExecutionsAlarm = failedExecutionsAlarm(
      this,
      this.stateMachine,
      config,
      `${manifest.name} (${config.name}): executions failed - MaxStepsExceeded, FallbackFailed, RouteRejected or a runtime error.`,
      topic,
    );
    this.handoffsAlarm = this.createHandoffsAlarm(config, topic);
    this.timedOutExecutionsAlarm = countAlarm(this, 'ExecutionsTimedOutAlarm', {
      metric: this.stateMachine.metricTimedOut({ period: ALARM_PERIOD, statistic: cloudwatch.Stats.SUM }),
      threshold: config.alarms.failedExecutionsThreshold,
      evaluationPeriods: config.alarms.evaluationPeriods,
      description: `${manifest.name} (${config.name}): executions timed out - a step or a checkpoint waited past its timeout; nobody was answered.`,
      topic,
    });
    const alarmScope = new Construct(this, 'StepAlarms');
    this.functionAlarms = Object.fromEntries(
      Object.entries(this.functions).map(([step, fn]) => [
        step,
        functionAlarms(alarmScope, step, fn, config, `${manifest.name} step ${step}`, topic),
      ]),
    );
    if (config.modelProvider === 'bedrock' && workflow.steps.some((s) => s.kind === 'llm')) {
      this.modelThrottledAlarm = this.createModelThrottledAlarm(config, topic);
    }
  }

  /**
   * The state machine a `workflow` step starts, by name (so no stack depends on another's outputs). Its task grants
   * the state machine role exactly that machine's `StartExecution`, its executions' `DescribeExecution` and
   * `StopExecution`, and the managed rule `.sync` needs.
   */
  private childStateMachine(workflow: string): sfn.IStateMachine {
    const id = `Child-${workflow}`;
    const made = this.node.tryFindChild(id) as sfn.IStateMachine | undefined;
    if (made) return made;
    return sfn.StateMachine.fromStateMachineName(this, id, this.childName(workflow));
  }

  private childName(workflow: string): string {
    return this.childStateMachineName?.(workflow) ?? workflowStateMachineName(Stack.of(this).stackName, workflow);
  }

  /** Allow `grantee` to start executions of this workflow (a trigger, or a caller of the `api` trigger). */
  grantStartExecution(grantee: iam.IGrantable): iam.Grant {
    return this.stateMachine.grantStartExecution(grantee);
  }

  /** Allow `grantee` to resume this workflow's checkpoints (`SendTaskSuccess`, `SendTaskFailure`, `SendTaskHeartbeat`). */
  grantResume(grantee: iam.IGrantable): iam.Grant {
    return this.stateMachine.grantTaskResponse(grantee);
  }

  /** One function per step under `Steps`, with an LLM step's model grant and the step's tool grants (`bindStep`). */
  private createStepFunctions(props: AgentWorkflowProps): Record<string, StepwiseFunction> {
    const { config } = props;
    const { manifest } = this.workflow;
    const stepScope = new Construct(this, 'Steps');
    const functions: Record<string, StepwiseFunction> = {};
    // Wait and workflow steps are states only; a map or parallel step's function joins its items or branches.
    for (const step of this.workflow.steps.filter((s) => !['wait', 'workflow', 'event'].includes(s.kind))) {
      const fn = new StepwiseFunction(stepScope, step.name, {
        entry: STEP_ENTRY,
        config,
        serviceName: manifest.name,
        workflowDir: this.workflow.dir,
        description: `${manifest.name} / ${step.name} (${step.kind}): ${step.description}`.slice(0, 256),
        timeout: step.kind === 'llm' ? LLM_STEP_TIMEOUT : CODE_STEP_TIMEOUT,
        environment: {
          WORKFLOW: manifest.name,
          STEP: step.name,
          MODEL_ID: this.modelId,
          MODEL_PROVIDER: config.modelProvider,
          STEP_OUTPUT: config.executionDataInLogs ? 'full' : 'summary',
          ...(step.kind === 'llm' && config.modelProvider === 'openai' && openAiEnvironment(config)),
        },
      });
      if (step.kind === 'llm' && config.modelProvider === 'openai' && config.openai?.apiKeyParameter)
        grantReadParameter(fn, config.openai.apiKeyParameter);
      if (step.kind === 'llm' && config.modelProvider === 'bedrock')
        for (const id of step.models ?? [this.modelId]) fn.grantInvokeModel(id);
      grantMcpCredentials(fn, this.workflow, step);
      props.bindStep?.(step, fn);
      functions[step.name] = fn;
    }
    return functions;
  }

  /** The Standard state machine compiled from the step graph, named after the stack and the workflow. */
  private createStateMachine(config: EnvConfig): sfn.StateMachine {
    const { manifest } = this.workflow;
    const stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromChainable(
        compileStates(
          new Construct(this, 'States'),
          this.workflow,
          this.functions,
          (child) => this.childStateMachine(child),
          this.eventWaits && (() => this.eventWaits!.register),
        ),
      ),
      stateMachineName: workflowStateMachineName(Stack.of(this).stackName, manifest.name),
      comment: `${manifest.name} v${manifest.version}: ${manifest.description}`,
      stateMachineType: sfn.StateMachineType.STANDARD,
      tracingEnabled: true,
      logs: { destination: this.logGroup, level: sfn.LogLevel.ALL, includeExecutionData: config.executionDataInLogs },
    });
    (stateMachine.node.defaultChild as sfn.CfnStateMachine).addMetadata(WORKFLOW_METADATA, manifest.name);
    this.acknowledgeStateMachineRole(stateMachine, [
      ...Object.values(this.functions),
      ...(this.eventWaits ? [this.eventWaits.register] : []),
    ]);
    return stateMachine;
  }

  /** Raised on `FallbackHandoff`, which the fallback step emits with the dimensions of its step metrics. */
  private createHandoffsAlarm(config: EnvConfig, topic?: sns.ITopic): cloudwatch.Alarm {
    const { manifest } = this.workflow;
    return countAlarm(this, 'HandoffsAlarm', {
      metric: new cloudwatch.Metric({
        namespace: metricsNamespace(config),
        metricName: 'FallbackHandoff',
        dimensionsMap: { service: manifest.name, workflow: manifest.name, step: manifest.fallback },
        period: ALARM_PERIOD,
        statistic: cloudwatch.Stats.SUM,
      }),
      threshold: config.alarms.handoffsThreshold,
      evaluationPeriods: config.alarms.evaluationPeriods,
      description: `${manifest.name} (${config.name}): the fallback ${manifest.fallback} handed executions to a person - a step keeps failing or misrouting (model down or misconfigured?).`,
      topic,
    });
  }

  /** Raised on `ModelThrottled`, which the step handler emits when Bedrock throttles a model call. */
  private createModelThrottledAlarm(config: EnvConfig, topic?: sns.ITopic): cloudwatch.Alarm {
    const { manifest } = this.workflow;
    return countAlarm(this, 'ModelThrottledAlarm', {
      metric: new cloudwatch.Metric({
        namespace: metricsNamespace(config),
        metricName: 'ModelThrottled',
        dimensionsMap: { service: manifest.name, workflow: manifest.name },
        period: ALARM_PERIOD,
        statistic: cloudwatch.Stats.SUM,
      }),
      threshold: config.alarms.throttlesThreshold,
      evaluationPeriods: config.alarms.evaluationPeriods,
      description: `${manifest.name} (${config.name}): Bedrock throttled model calls of ${this.modelId} - the steps retry with backoff, then hand off; raise the model's quota or lower the load.`,
      topic,
    });
  }

  private acknowledgeStateMachineRole(stateMachine: sfn.StateMachine, functions: StepwiseFunction[]): void {
    const role = Validations.of(stateMachine.role);
    role.acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'CloudWatch Logs delivery (logs:*LogDelivery*) and X-Ray (PutTraceSegments) support no resource-level permissions.',
    });
    // A workflow step's `.sync` task reads the child's executions: CDK grants `execution:<child name>*`.
    for (const child of this.workflow.steps.flatMap((s) => (s.workflow ? [s.workflow.name] : []))) {
      const name = this.childName(child);
      role.acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${name}*]`,
        reason: `states:DescribeExecution and StopExecution on the executions of the child workflow ${child} only.`,
      });
    }
    // LambdaInvoke also grants `<function arn>:*`: the function's versions and aliases.
    for (const fn of functions) {
      const logicalId = stateMachine.stack.getLogicalId(fn.node.defaultChild as lambda.CfnFunction);
      role.acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>:*]`,
        reason: 'lambda:InvokeFunction on the step function and its versions only.',
      });
    }
  }
}

/** An LLM step's view of the OpenAI-compatible endpoint: where and which model; the key only by its parameter's name. */
function openAiEnvironment(config: EnvConfig): Record<string, string> {
  const { baseUrl, model, apiKeyParameter } = config.openai!;
  return {
    OPENAI_BASE_URL: baseUrl,
    OPENAI_MODEL: model,
    ...(apiKeyParameter && { OPENAI_API_KEY_PARAMETER: apiKeyParameter }),
  };
}

/** `ssm:GetParameter` on one parameter (a SecureString under the account's `aws/ssm` key needs no KMS grant). */
function grantReadParameter(fn: StepwiseFunction, name: string): void {
  const stack = Stack.of(fn);
  iam.Grant.addToPrincipal({
    grantee: fn,
    actions: ['ssm:GetParameter'],
    resourceArns: [stack.formatArn({ service: 'ssm', resource: 'parameter', resourceName: name.replace(/^\//, '') })],
  });
}

/** The initial state: the execution input at `$.input`, an empty StepState at `$.result`, no error. */
function startState(scope: Construct, entry: string, counters?: Record<string, number>): sfn.CustomState {
  // CustomState because Pass `parameters` drops null values, and the Tasks read `$.error`.
  return new sfn.CustomState(scope, 'Start', {
    stateJson: {
      Type: 'Pass',
      Comment: `Start: the execution input goes to $.input and an empty result routes to the entry step ${entry}${counters ? '; every counter starts at 0' : ''}.`,
      Parameters: {
        'input.$': '$',
        result: { step: null, next: entry, reason: 'start', decidedBy: null, fields: {}, data: {}, count: 0 },
        error: null,
        ...(counters && { counters }),
      },
    },
  });
}

/** The `StepInput` payload of a step's Task (and of its consensus states, with `extra`). */
function stepPayload(
  step: StepDefinition,
  workflow: WorkflowDefinition,
  extra: Record<string, unknown> = {},
): sfn.TaskInput {
  return sfn.TaskInput.fromObject({
    workflow: workflow.manifest.name,
    step: step.name,
    input: sfn.JsonPath.objectAt('$.input'),
    previous: sfn.JsonPath.objectAt('$.result'),
    error: sfn.JsonPath.objectAt('$.error'),
    count: sfn.JsonPath.mathAdd(sfn.JsonPath.numberAt('$.result.count'), 1),
    execution: { id: sfn.JsonPath.executionId, name: sfn.JsonPath.executionName },
    ...(startCounters(workflow.manifest) && { counters: sfn.JsonPath.objectAt('$.counters') }),
    ...extra,
  });
}

/** Retry transient model/tool errors with backoff and full jitter, then Lambda service errors. */
function addStepRetries(task: tasks.LambdaInvoke, workflow: WorkflowDefinition): void {
  const { retry } = workflow.manifest;
  task.addRetry({
    errors: [...TRANSIENT_ERRORS],
    interval: Duration.seconds(retry.intervalSeconds),
    maxAttempts: retry.maxAttempts,
    backoffRate: retry.backoffRate,
    maxDelay: Duration.seconds(retry.maxDelaySeconds),
    jitterStrategy: sfn.JitterType.FULL,
  });
  task.addRetry({ errors: LAMBDA_SERVICE_ERRORS, interval: Duration.seconds(2), maxAttempts: 6, backoffRate: 2 });
}

function stepTask(
  scope: Construct,
  step: StepDefinition,
  fn: StepwiseFunction,
  workflow: WorkflowDefinition,
  extra: Record<string, unknown> = {},
): tasks.LambdaInvoke {
  const task = new tasks.LambdaInvoke(scope, step.name, {
    comment: stepComment(step),
    lambdaFunction: fn,
    payloadResponseOnly: true,
    // Added below, after the transient-error retrier, in the contract's order.
    retryOnServiceExceptions: false,
    payload: stepPayload(step, workflow, step.consensus ? finalVotePayload : extra),
    // Exactly the StepState keys: reply, toolCalls, usage stay in the event log, not in the 256 KB state.
    resultSelector: {
      step: sfn.JsonPath.stringAt('$.step'),
      next: sfn.JsonPath.stringAt('$.next'),
      reason: sfn.JsonPath.stringAt('$.reason'),
      decidedBy: sfn.JsonPath.stringAt('$.decidedBy'),
      fields: sfn.JsonPath.objectAt('$.fields'),
      data: sfn.JsonPath.objectAt('$.data'),
      count: sfn.JsonPath.numberAt('$.count'),
    },
    resultPath: '$.result',
  });
  addStepRetries(task, workflow);
  return task;
}

/** The states an execution ends in: success, and the three ways the fallback itself can fail. */
function terminalStates(scope: Construct, manifest: WorkflowDefinition['manifest']) {
  const done = new sfn.Succeed(scope, TERMINAL_STATES.done, {
    comment: 'The workflow finished: a step routed to DONE.',
  });
  const failState = (name: string, comment: string) => new sfn.Fail(scope, name, { error: name, comment });
  const maxStepsExceeded = failState(
    TERMINAL_STATES.maxStepsExceeded,
    `The fallback ${manifest.fallback} itself routed on after ${manifest.maxSteps} steps (maxSteps): the execution fails.`,
  );
  const fallbackFailed = failState(
    TERMINAL_STATES.fallbackFailed,
    `The fallback ${manifest.fallback} failed: nobody was answered, the execution fails.`,
  );
  const routeRejected = failState(
    TERMINAL_STATES.routeRejected,
    `The fallback ${manifest.fallback} chose a route it does not declare: the execution fails.`,
  );
  return { done, maxStepsExceeded, fallbackFailed, routeRejected };
}

/**
 * A tripped breaker still ends in the fallback's hand-off (the customer is answered), with the reason in $.error;
 * only a fallback that itself routes on past the limit ends in MaxStepsExceeded.
 */
function maxStepsHandoff(scope: Construct, manifest: WorkflowDefinition['manifest'], fallback: sfn.IChainable) {
  return new sfn.Pass(scope, MAX_STEPS_HANDOFF, {
    comment: `Circuit breaker: ${manifest.maxSteps} steps ran (maxSteps) without finishing; the reason goes to $.error and the fallback ${manifest.fallback} hands the case over.`,
    result: sfn.Result.fromObject({
      Error: TERMINAL_STATES.maxStepsExceeded,
      Cause: `the workflow ran ${manifest.maxSteps} steps (maxSteps) without finishing`,
    }),
    resultPath: '$.error',
  }).next(fallback);
}

/** Compile the step graph into states under `scope`; returns the start state. */
function compileStates(
  scope: Construct,
  workflow: WorkflowDefinition,
  functions: Record<string, StepwiseFunction>,
  childStateMachine: (workflow: string) => sfn.IStateMachine,
  eventRegister?: () => lambda.IFunction,
): sfn.IChainable {
  const { manifest } = workflow;
  const { done, maxStepsExceeded, fallbackFailed, routeRejected } = terminalStates(scope, manifest);

  // Steps inside items and branches are laid out by their map or parallel step (compile/chain.ts).
  const { scopes } = workflowScopes(workflow);
  const compileKit: CompileKit = {
    workflow,
    counters: startCounters(manifest) !== undefined,
    scopes,
    stepTask: (s, step, extra) => stepTask(s, step, functions[step.name]!, workflow, extra),
    childStateMachine,
    ...(eventRegister && { eventRegister }),
  };
  const topSteps = scopes[0]!.steps;
  const built = new Map(topSteps.map((step) => [step.name, stepStates(scope, step, compileKit)]));
  const task = (name: string) => built.get(name)!.entry;
  const fallback = task(manifest.fallback);
  // A step that ran maxSteps steps and still wants to continue is stopped (count includes this step).
  const circuitBreaker = sfn.Condition.and(
    sfn.Condition.numberGreaterThanEquals('$.result.count', manifest.maxSteps),
    sfn.Condition.not(sfn.Condition.stringEquals('$.result.next', DONE)),
  );

  const handoff = maxStepsHandoff(scope, manifest, fallback);

  // A route into a step goes through its counter checks and its consensus sampling, when it has them.
  const gates = new CounterGates(scope, manifest, (name) => task(name));
  const sampling = new Map<string, sfn.IChainable>();
  const kit = (step: StepDefinition): StepTaskKit => ({
    counters: startCounters(manifest) !== undefined,
    payload: (extra) => stepPayload(step, workflow, extra),
    retry: (t) => addStepRetries(t, workflow),
  });
  const catchTo = (step: StepDefinition) => (step.name === manifest.fallback ? fallbackFailed : fallback);
  for (const step of topSteps.filter((s) => s.consensus))
    sampling.set(
      step.name,
      consensusStates(scope, step, functions[step.name]!, kit(step), built.get(step.name)!.last, (s) =>
        s.addCatch(catchTo(step), { errors: [sfn.Errors.ALL], resultPath: '$.error' }),
      ),
    );
  const entryOf = (name: string) => gates.gate(name, sampling.get(name) ?? task(name));

  for (const step of topSteps) {
    const isFallback = step.name === manifest.fallback;
    const states = built.get(step.name)!;
    const failTo = states.onFailure ? entryOf(states.onFailure) : catchTo(step);
    for (const r of states.routed ?? [])
      for (const s of r.states) s.addCatch(entryOf(r.to), { errors: r.errors, resultPath: '$.error' });
    for (const s of states.catchable) s.addCatch(failTo, { errors: [sfn.Errors.ALL], resultPath: '$.error' });
    for (const pass of states.failing ?? []) pass.next(failTo);
    const route = new sfn.Choice(scope, routeStateName(step.name), {
      comment: routeComment(step, manifest, isFallback),
    }).when(circuitBreaker, isFallback ? maxStepsExceeded : handoff);
    for (const edge of step.next) {
      route.when(sfn.Condition.stringEquals('$.result.next', edge), edge === DONE ? done : entryOf(edge));
    }
    // A route outside the declared edges is never taken.
    route.otherwise(isFallback ? routeRejected : fallback);
    states.last.next(
      step.pause
        ? pauseStates(scope, { step, workflow, route, onTimeout: task(step.pause.onTimeout), fallback })
        : route,
    );
  }
  return startState(scope, manifest.entry, startCounters(manifest)).next(entryOf(manifest.entry));
}

/** The `Comment` of a step's route Choice: where each value of `$.result.next` goes. */
function routeComment(step: StepDefinition, manifest: WorkflowDefinition['manifest'], isFallback: boolean): string {
  const edges = step.next.map((n) => (n === DONE ? `DONE → ${TERMINAL_STATES.done}` : n)).join(', ');
  const otherwise = isFallback ? TERMINAL_STATES.routeRejected : `the fallback ${manifest.fallback}`;
  const breaker = isFallback ? TERMINAL_STATES.maxStepsExceeded : MAX_STEPS_HANDOFF;
  return `Routes ${step.name}'s decision ($.result.next) to one of its declared edges: ${edges}. At ${manifest.maxSteps} steps (maxSteps) → ${breaker}; any other route → ${otherwise}.`;
}
