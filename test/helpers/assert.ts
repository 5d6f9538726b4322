// Assertions on promises.
import * as assert from 'uvu/assert';

/** Awaits `promise`, asserts that it rejects with a message matching `pattern`, returns the error. */
export async function rejects(promise: Promise<unknown>, pattern: RegExp): Promise<Error> {
  const outcome = await promise.then(() => undefined, (error: unknown) => error);
  if (!(outcome instanceof Error)) assert.unreachable(`expected a rejection matching ${pattern}`);
  assert.match((outcome as Error).message, pattern);
  return outcome as Error;
}
