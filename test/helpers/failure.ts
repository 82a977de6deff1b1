// Awaits a promise that must reject with an AfsError and returns that error for closer checks.
import { expect } from "vitest";
import { AfsError } from "../../src/core/errors.js";

export async function failure(p: Promise<unknown>): Promise<AfsError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(AfsError);
  return e as AfsError;
}
