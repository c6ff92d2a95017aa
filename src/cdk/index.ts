/**
 * `stepwise/cdk`: the CDK side. {@link StepwiseApp} turns a project's `statemachines/` into one
 * stack per workflow and lifecycle; the L3 constructs and stacks are for teams that compose their
 * own, with the environment they are built for (`resolveEnvironment` of the project's config).
 * `defineConfig`, for `stepwise.config.ts`, is in `stepwise/config`.
 */

export {
  type EnvConfig,
  EnvConfigSchema,
  loadProjectConfig,
  type ResolveOptions,
  resolveEnvironment,
} from '../project/config.ts';
export { loadProject, type Project } from '../project/project.ts';
export { loadPlugin, type WorkflowPlugin } from '../runtime/plugin.ts';
export { AgentWorkflow, type AgentWorkflowProps } from './constructs/agent-workflow.ts';
export { EmailIngress, type EmailIngressProps } from './constructs/email-ingress.ts';
export { LifecycleWorkflow, type LifecycleWorkflowProps } from './constructs/lifecycle-workflow.ts';
export { StepwiseFunction, type StepwiseFunctionProps } from './constructs/stepwise-function.ts';
export { WorkflowDashboard, type WorkflowDashboardProps } from './constructs/workflow-dashboard.ts';
export { workflowStackName } from './names.ts';
export { LifecycleStack, type LifecycleStackProps } from './stacks/lifecycle-stack.ts';
export { WorkflowStack, type WorkflowStackProps } from './stacks/workflow-stack.ts';
export { addStepwiseStacks, StepwiseApp, type StepwiseAppProps, type StepwiseStacks } from './stepwise-app.ts';
