import { describe, expect, it } from 'vitest';
import { ModelTimeoutError } from '../../../src/core/errors.ts';
import {
  invokeLikeLambda,
  LambdaFunctionError,
  type LocalFunction,
  LocalRuntimeFault,
} from '../../../src/local/cloud/lambda.ts';

const fn: LocalFunction = {
  name: 'StepFn',
  arn: 'arn:aws:lambda:us-east-1:123456789012:function:StepFn',
  timeoutSeconds: 30,
  memoryMB: 512,
};

/** The error a call rejects with (failing the test if it resolves). */
const failure = (call: Promise<unknown>) =>
  call.then(
    () => expect.fail('expected the invocation to fail'),
    (e: LambdaFunctionError) => e,
  );

describe('invokeLikeLambda', () => {
  it('gives the handler a JSON copy of the event and a Lambda context, and returns a JSON copy of the result', async () => {
    const event = { when: new Date(0), list: [1, undefined] };
    const result = await invokeLikeLambda(
      (e, context) => {
        e.mutated = true;
        return {
          seen: e,
          name: context.functionName,
          arn: context.invokedFunctionArn,
          left: context.getRemainingTimeInMillis(),
          gone: undefined,
        };
      },
      event,
      fn,
    );
    expect(event).not.toHaveProperty('mutated');
    expect(result).toEqual({
      seen: { when: '1970-01-01T00:00:00.000Z', list: [1, null], mutated: true },
      name: 'StepFn',
      arn: fn.arn,
      left: expect.any(Number),
    });
    expect((result as { left: number }).left).toBeGreaterThan(29_000);
    expect(await invokeLikeLambda(() => undefined, {}, fn)).toBeNull();
  });

  it('turns a thrown error into errorType = its name and the JSON Lambda error payload', async () => {
    const thrown = await failure(invokeLikeLambda(() => Promise.reject(new ModelTimeoutError('too slow')), {}, fn));
    expect(thrown).toBeInstanceOf(LambdaFunctionError);
    expect(thrown.name).toBe('ModelTimeoutError');
    expect(JSON.parse(thrown.message)).toMatchObject({
      errorType: 'ModelTimeoutError',
      errorMessage: 'too slow',
      trace: expect.any(Array),
    });

    const notAnError = await failure(
      invokeLikeLambda(
        () => {
          throw 'plain string';
        },
        {},
        fn,
      ),
    );
    expect(notAnError.payload).toEqual({ errorType: 'Error', errorMessage: 'plain string', trace: [] });

    const unserializable = await failure(invokeLikeLambda(() => ({ big: 1n }), {}, fn));
    expect(unserializable.name).toBe('Runtime.MarshalError');
  });

  it('fails an invocation still running after the function timeout with Sandbox.Timedout, as Lambda reports it', async () => {
    const quick: LocalFunction = { ...fn, timeoutSeconds: 0.05 };
    const never = await failure(invokeLikeLambda(() => new Promise(() => {}), {}, quick));
    expect(never.name).toBe('Sandbox.Timedout');
    expect(never.payload).toEqual({
      errorType: 'Sandbox.Timedout',
      errorMessage: expect.stringMatching(/^RequestId: [\w-]+ Error: Task timed out after 0\.05 seconds$/),
    });
    // No Timeout (not a function): nothing times out.
    const { timeoutSeconds: _, ...notAFunction } = fn;
    expect(
      await invokeLikeLambda(() => new Promise((resolve) => setTimeout(() => resolve('late'), 60)), {}, notAFunction),
    ).toBe('late');
  });
});

describe('LocalRuntimeFault', () => {
  it('is a States.Runtime error the interpreter neither retries nor catches', () => {
    const fault = new LocalRuntimeFault('no handler');
    expect(fault.name).toBe('States.Runtime');
    expect(fault.isRetryable).toBe(false);
    expect(fault.isCatchable).toBe(false);
  });
});
