/**
 * aws-local-stepfunctions 3 declares Node >= 22 and calls Promise.withResolvers; on Node 20 every
 * Task would fail (and a States.ALL Catch would hide it). Import this before running any ASL.
 */
if (typeof (Promise as any).withResolvers !== 'function') {
  (Promise as any).withResolvers = function withResolvers<T>() {
    let resolve!: (value: T | PromiseLike<T>) => void;
    let reject!: (reason?: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

export {};
