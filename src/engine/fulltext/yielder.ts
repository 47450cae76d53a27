// Indexing runs on the same thread as HTTP and Raft heartbeats: long loops call
// `maybe()` often, and it gives the event loop a turn once a time slice is used up.

const SLICE_MS = 8;

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
