// Indexing runs on the same thread as HTTP and Raft heartbeats: long loops call
// `maybe()` often, and it gives the event loop a turn once a time slice is used up.

// A search waits for a turn when it arrives and again for each read of the store (its hits'
// documents), so while an index is written its latency is a few slices more than alone: at
// 8 ms, searches during an import took 15-19 ms at the median; at 2 ms 7.5-8.6 ms, at 1 ms
// 5.7-7.1. Import speed did not move (within ±10% either way): a turn costs microseconds.
const SLICE_MS = 2;

export class Yielder {
  private last = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Cheap to call in a tight loop; only yields when the slice is over. */
  async maybe(): Promise<void> {
    const now = performance.now();
    if (now - this.last < this.sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.last = performance.now();
  }
}

/** Runs work written as a generator (each `yield` a place where it may pause) to its end, at once. */
export function runSteps<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** The same work, giving the event loop turns at its pauses. */
export async function runStepsInTurns<T>(steps: Generator<void, T>, yielder: Yielder): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await yielder.maybe();
  }
}

/**
 * Writes a zero into every page of `a`, giving the event loop turns. Fresh memory costs a page
 * fault at its first write, milliseconds per MiB on some virtual machines: a loop that then
 * writes all over a large new array would take every one of them in its first slice.
 */
export async function touchInTurns(a: Uint8Array | Uint32Array | Int32Array, yielder: Yielder): Promise<void> {
  const perPage = 4096 / a.BYTES_PER_ELEMENT;
  for (let i = 0; i < a.length; i += perPage) {
    a[i] = 0;
    if ((i / perPage) % 256 === 255) await yielder.maybe();
  }
}
