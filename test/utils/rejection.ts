/** What `promise` rejects with; fails the test when it fulfils. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error: unknown) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** The Error `promise` rejects with; fails the test when it fulfils or rejects with a non-Error. */
export async function errorOf(promise: Promise<unknown>): Promise<Error> {
  const error = await rejectionOf(promise);
  if (error instanceof Error) {
    return error;
  }
  throw new Error(`expected an Error, got ${String(error)}`);
}
