/** The error a promise rejects with; fails the test if it resolves instead. */
export async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a failure');
}
