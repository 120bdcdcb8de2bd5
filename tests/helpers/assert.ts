// Assertions for Deno.test without jsr: node:assert underneath, @std/assert-like names.
import assert from "node:assert/strict";

export function assertEquals<T>(actual: T, expected: T, msg?: string): void {
  // @types/node 26 types the message as non-optional in the string overload.
  if (msg === undefined) assert.deepStrictEqual(actual, expected);
  else assert.deepStrictEqual(actual, expected, msg);
}

export function assert_(cond: unknown, msg?: string): asserts cond {
  if (msg === undefined) assert.ok(cond);
  else assert.ok(cond, msg);
}
export { assert_ as assert };

export function assertThrows<E extends Error>(
  fn: () => unknown,
  // deno-lint-ignore no-explicit-any
  type: new (...args: any[]) => E,
): E {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof type, `expected ${type.name}, got ${err}`);
    return err as E;
  }
  throw new assert.AssertionError({ message: `expected ${type.name} to be thrown` });
}

export function assertMatch(actual: string, re: RegExp, msg?: string): void {
  if (msg === undefined) assert.match(actual, re);
  else assert.match(actual, re, msg);
}
