// What API tests assert about refusals: the official client's error for a request, as
// status, code and message (plus type and link), and polling until a condition holds.

import { MeilisearchApiError } from 'meilisearch';
import { expect } from 'vitest';

/** The refusal `p` ends with (it must be one): HTTP status and the error body. */
export async function apiError(p: Promise<unknown>) {
  const e = await p.catch((x: unknown) => x);
  expect(e).toBeInstanceOf(MeilisearchApiError);
  const err = e as MeilisearchApiError;
  return { status: err.response.status, ...(err.cause as { code: string; message: string }) };
}

/** Calls `f` every 50 ms until `ok` holds for its value (10 s at most). */
export async function until<T>(f: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await f();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out');
}
