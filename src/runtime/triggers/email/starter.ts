import { ExecutionAlreadyExists, type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { InboundEmail } from '../../../definitions/workflow/inbound-email.ts';

/** The execution input the ingress starts a workflow with (`$.input` in every step). */
export interface WorkflowInput {
  email: InboundEmail;
}

/** Starts a workflow execution under a given name. */
export interface ExecutionStarter {
  /** `DUPLICATE` when an execution with this name already exists: nothing new is started. */
  start(name: string, input: WorkflowInput): Promise<'STARTED' | 'DUPLICATE'>;
  /**
   * Whether `STARTED` always means this call started the execution. Step Functions' StartExecution
   * also answers success for a same-name, same-input execution that is still running, so there the
   * ingress asks its event log which delivery came first.
   */
  readonly definitive: boolean;
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

/**
 * Step Functions adapter: `StartExecution` with the derived name; `ExecutionAlreadyExists` means a duplicate delivery.
 */
export function sfnStarter(client: SFNClient, stateMachineArn: string): ExecutionStarter {
  return {
    definitive: false,
    start: (name, input) =>
      startOnce(() => client.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }))),
  };
}

/**
 * What the local adapter needs of `LocalRuntime` (src/local/asl/runtime.ts), which throws the SDK's
 * `ExecutionAlreadyExists` for a reused name.
 */
export interface LocalExecutions<E> {
  startExecution(stateMachine: string, input: unknown, options: { name: string }): Promise<E>;
}

/**
 * Local adapter over the local runtime. Like `StartExecution`, `start` answers as soon as the
 * execution runs (a reused name is refused before it starts), not when it ends: concurrent
 * redeliveries then see the same order of events as on AWS. `onStarted` receives each started
 * execution's completion.
 */
export function localStarter<E>(
  runtime: LocalExecutions<E>,
  stateMachine: string,
  onStarted?: (name: string, execution: Promise<E>) => void,
): ExecutionStarter {
  return {
    // The local runtime refuses every reused name.
    definitive: true,
    async start(name, input) {
      const execution = runtime.startExecution(stateMachine, input, { name });
      const refused = await Promise.race([
        execution.then(
          () => false,
          (e: unknown) => e instanceof ExecutionAlreadyExists,
        ),
        new Promise<false>((resolve) => setImmediate(() => resolve(false))),
      ]);
      if (refused) return 'DUPLICATE';
      onStarted?.(name, execution);
      return 'STARTED';
    },
  };
}
