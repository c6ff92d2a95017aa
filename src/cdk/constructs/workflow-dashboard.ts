import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { EnvConfig } from '../../project/config.ts';
import { metricsNamespace } from './stepwise-function.ts';

export interface WorkflowDashboardProps {
  readonly workflow: WorkflowDefinition;
  readonly config: EnvConfig;
  readonly stateMachine: sfn.IStateMachine;
  /** @default 5 minutes */
  readonly period?: Duration;
}

/**
 * One CloudWatch dashboard per workflow (which steps run most, where failures and hand-offs
 * occur, duration and tokens per step), built only from the metrics the step handler
 * already emits (dimensions `service`, `workflow`, `step`) and the state machine's own metrics.
 */
export class WorkflowDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: WorkflowDashboardProps) {
    super(scope, id);
    const { workflow, config, stateMachine } = props;
    const name = workflow.manifest.name;
    const period = props.period ?? Duration.minutes(5);
    const perStep = (metricName: string, statistic: string = cloudwatch.Stats.SUM) =>
      workflow.steps.map(
        (step) =>
          new cloudwatch.Metric({
            namespace: metricsNamespace(config),
            metricName,
            dimensionsMap: { service: name, workflow: name, step: step.name },
            period,
            statistic,
            label: step.name,
          }),
      );
    const graph = (title: string, metrics: cloudwatch.IMetric[], width = 12) =>
      new cloudwatch.GraphWidget({ title, left: metrics, width, height: 6 });
    const llmSteps = workflow.steps.filter((s) => s.kind === 'llm');
    // Model metrics exist for LLM steps only.
    const tokens = (metricName: string) => perStep(metricName).filter((m) => llmSteps.some((s) => m.label === s.name));

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `stepwise-${name}-${config.name}`,
      defaultInterval: Duration.days(1),
      widgets: [
        [
          graph(
            'Executions',
            [
              stateMachine.metricStarted({ period }),
              stateMachine.metricSucceeded({ period }),
              stateMachine.metricFailed({ period }),
            ],
            8,
          ),
          graph('Steps run (which steps run most)', perStep('StepCompleted'), 8),
          graph(
            `Hand-offs to a person (${workflow.manifest.fallback})`,
            [
              new cloudwatch.Metric({
                namespace: metricsNamespace(config),
                metricName: 'FallbackHandoff',
                dimensionsMap: { service: name, workflow: name, step: workflow.manifest.fallback },
                period,
                statistic: cloudwatch.Stats.SUM,
              }),
            ],
            8,
          ),
        ],
        [
          graph('Step duration p90 (ms)', perStep('StepDurationMs', cloudwatch.Stats.p(90))),
          graph('Tool calls not completed (refused or failed)', perStep('ToolCallRefused')),
        ],
        // A workflow of code steps only (a shared ticket workflow) calls no model: no empty model widgets.
        ...(llmSteps.length
          ? [
              [
                graph('Model calls per step', tokens('ModelCalls'), 8),
                graph('Input tokens (full rate) per step', tokens('ModelInputTokens'), 8),
                graph(
                  'Cache read / write tokens per step',
                  [...tokens('ModelCacheReadTokens'), ...tokens('ModelCacheWriteTokens')],
                  8,
                ),
              ],
            ]
          : []),
      ],
    });
  }
}
