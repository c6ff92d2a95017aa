import { ExecutionAlreadyExists, StartExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import type { InboundEmail } from './inbound.ts';

/** The execution input the ingress starts a workflow with (`$.input` in every step). */
export interface WorkflowInput {
  email: InboundEmail;
}

/** Starts a workflow execution under a given name. */
export interface ExecutionStarter {
  /** `DUPLICATE` when an execution with this name already exists: nothing new is started. */
  start(name: string, input: WorkflowInput): Promise<'STARTED' | 'DUPLICATE'>;
}

async function startOnce(start: () => Promise<unknown>): Promise<'STARTED' | 'DUPLICATE'> {
  try {
    await start();
    return 'STARTED';
  } catch (e) {
    if (e instanceof ExecutionAlreadyExists) return 'DUPLICATE';
    throw e;
  }
}

/** Step Functions adapter: `StartExecution` with the derived name; `ExecutionAlreadyExists` means a duplicate delivery. */
export function sfnStarter(client: SFNClient, stateMachineArn: string): ExecutionStarter {
  return {
    start: (name, input) =>
      startOnce(() => client.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }))),
  };
}

/** What the local adapter needs of `LocalRuntime` (infra/local/runtime.ts), which throws the SDK's `ExecutionAlreadyExists` for a reused name. */
export interface LocalExecutions<E> {
  startExecution(stateMachine: string, input: unknown, options: { name: string }): Promise<E>;
}

/**
 * Local adapter over the local runtime. The local runtime runs an execution to its end before
 * returning, so `start` does too; `onFinished` receives each finished execution.
 */
export function localStarter<E>(runtime: LocalExecutions<E>, stateMachine: string, onFinished?: (execution: E) => void): ExecutionStarter {
  return {
    start: (name, input) =>
      startOnce(async () => {
        const execution = await runtime.startExecution(stateMachine, input, { name });
        onFinished?.(execution);
      }),
  };
}
