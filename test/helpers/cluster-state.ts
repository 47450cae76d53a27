import { createHash } from 'node:crypto';

type Json = Record<string, unknown>;

/**
 * What must be identical on every node, read through the public API: everything, the times
 * tasks and batches started and finished included (the log decides them).
 */
export interface NodeState {
  indexes: Json[];
  documents: Record<string, Json[]>;
  settings: Record<string, unknown>;
  tasks: Json[];
  batches: Json[];
}

async function getJson(url: string): Promise<Json> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`GET ${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as Json;
}

function sortKey(doc: Json, pk: unknown): string {
  const v = typeof pk === 'string' ? doc[pk] : undefined;
  return typeof v === 'number' ? v.toString().padStart(20, '0') : String(v);
}

async function readTasks(url: string): Promise<Json[]> {
  return ((await getJson(`${url}/tasks?limit=1000000&reverse=true`))['results'] as Json[]);
}

/** One node's state; throws if a batch finished while it was being read (the parts would not match). */
export async function readState(url: string): Promise<NodeState> {
  const before = JSON.stringify(await readTasks(url));
  const idx = await getJson(`${url}/indexes?limit=1000`);
  const indexes = idx['results'] as Json[];
  const documents: Record<string, Json[]> = {};
  const settings: Record<string, unknown> = {};
  for (const ix of indexes) {
    const uid = ix['uid'] as string;
    const docs = (await getJson(`${url}/indexes/${uid}/documents?limit=1000000`))['results'] as Json[];
    documents[uid] = docs.sort((a, b) => (sortKey(a, ix['primaryKey']) < sortKey(b, ix['primaryKey']) ? -1 : 1));
    const s = await fetch(`${url}/indexes/${uid}/settings`);
    if (s.ok) settings[uid] = await s.json();
  }
  const tasks = await readTasks(url);
  if (JSON.stringify(tasks) !== before) throw new Error(`${url} processed tasks while it was being read`);
  // A batch's progressTrace is the time its processing took on this node: the one part of it
  // that is each node's own.
  const batches = ((await getJson(`${url}/batches?limit=1000000&reverse=true`))['results'] as Json[]).map(withoutProgressTrace);
  return { indexes, documents, settings, tasks, batches };
}

export function digest(s: NodeState): string {
  return createHash('sha256').update(JSON.stringify(s)).digest('hex');
}

function settled(s: NodeState): boolean {
  return s.tasks.every((t) => t['status'] !== 'enqueued' && t['status'] !== 'processing');
}

/**
 * Waits until every node has processed every task it knows, knows the `acked` tasks, and all
 * nodes' states are equal. Returns the last states read either way: the caller asserts on them,
 * so a failure shows how they differ.
 */
export async function waitConverged(urls: string[], acked: number[], timeoutMs = 60_000): Promise<NodeState[]> {
  const deadline = Date.now() + timeoutMs;
  let states: NodeState[] = [];
  for (;;) {
    try {
      states = await Promise.all(urls.map(readState));
      const digests = new Set(states.map(digest));
      const uids = new Set(states[0]!.tasks.map((t) => t['uid'] as number));
      if (digests.size === 1 && states.every(settled) && acked.every((u) => uids.has(u))) return states;
    } catch {
      // a node restarting: read again
    }
    if (Date.now() > deadline) return states;
    await new Promise((r) => setTimeout(r, 250));
  }
}

export interface Ack {
  taskUid: number;
  docId: string;
  via: string;
}

/**
 * Small document writes from `writers` concurrent clients, each on its own node in turn, until
 * stopped. Every 202 is recorded with the document it carried; failures are counted (they are
 * expected while a leader is being replaced) but never recorded as acknowledged.
 */
export class WriteLoad {
  readonly acks: Ack[] = [];
  readonly attempted = new Set<string>();
  failures = 0;
  private running = true;
  private readonly loops: Promise<void>[] = [];
  private seq = 0;

  constructor(
    private readonly urls: () => string[],
    private readonly index: string,
    writers = 3,
  ) {
    for (let w = 0; w < writers; w++) this.loops.push(this.loop(w));
  }

  get acked(): number[] {
    return this.acks.map((a) => a.taskUid);
  }

  /** Resolves once at least `n` more writes were acknowledged (or throws after `timeoutMs`). */
  async waitForAcks(n: number, timeoutMs = 30_000): Promise<void> {
    const target = this.acks.length + n;
    const deadline = Date.now() + timeoutMs;
    while (this.acks.length < target) {
      if (Date.now() > deadline) throw new Error(`only ${this.acks.length}/${target} writes acknowledged in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private async loop(w: number): Promise<void> {
    let turn = w;
    while (this.running) {
      const urls = this.urls();
      const url = urls[turn++ % Math.max(1, urls.length)];
      if (!url) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      const docId = `w${w}-${this.seq++}`;
      this.attempted.add(docId);
      try {
        const r = await fetch(`${url}/indexes/${this.index}/documents`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify([{ id: docId, writer: w, text: `document ${docId}` }]),
          signal: AbortSignal.timeout(15_000),
        });
        if (r.status === 202) {
          const { taskUid } = (await r.json()) as { taskUid: number };
          this.acks.push({ taskUid, docId, via: url });
        } else {
          this.failures++;
          await r.arrayBuffer();
          await new Promise((res) => setTimeout(res, 20));
        }
      } catch {
        this.failures++;
        await new Promise((res) => setTimeout(res, 20));
      }
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }
}

/** Checks a converged state against the acknowledged writes; returns the problems found. */
export function lostWrites(state: NodeState, index: string, load: WriteLoad): string[] {
  const problems: string[] = [];
  const tasks = new Map(state.tasks.map((t) => [t['uid'] as number, t]));
  const docs = new Set((state.documents[index] ?? []).map((d) => String(d['id'])));
  for (const a of load.acks) {
    const t = tasks.get(a.taskUid);
    if (!t) problems.push(`acknowledged task ${a.taskUid} (${a.docId} via ${a.via}) is missing`);
    else if (t['status'] !== 'succeeded') problems.push(`acknowledged task ${a.taskUid} ended ${String(t['status'])}`);
    if (!docs.has(a.docId)) problems.push(`acknowledged document ${a.docId} is missing; its task: ${JSON.stringify(t)}`);
  }
  for (const d of docs) if (!load.attempted.has(d)) problems.push(`document ${d} was never written`);
  return problems;
}

/** A batch as `GET /batches` shows it, less the node's own timings. */
export function withoutProgressTrace(batch: Json): Json {
  const stats = batch['stats'] as Json | null | undefined;
  if (!stats || !('progressTrace' in stats)) return batch;
  const { progressTrace: _, ...rest } = stats;
  return { ...batch, stats: rest };
}
