import { createHash } from 'node:crypto';
import { withoutProgressTrace } from '../helpers/cluster-state.js';

type Json = Record<string, unknown>;

/**
 * Everything a backup must carry, read through the public API: indexes, their settings and
 * documents (in listing order), API keys, experimental features, tasks and batches.
 */
export interface BackupState {
  indexes: Json[];
  settings: Record<string, unknown>;
  documents: Record<string, Json[]>;
  keys: Json[];
  features: Json;
  tasks: Json[];
  batches: Json[];
}

export function reader(url: string, key?: string) {
  return async function getJson(path: string): Promise<Json> {
    const r = await fetch(`${url}${path}`, key ? { headers: { Authorization: `Bearer ${key}` } } : {});
    if (!r.ok) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`);
    return (await r.json()) as Json;
  };
}

export async function readBackupState(url: string, key?: string): Promise<BackupState> {
  const get = reader(url, key);
  const indexes = (await get('/indexes?limit=10000'))['results'] as Json[];
  const settings: Record<string, unknown> = {};
  const documents: Record<string, Json[]> = {};
  for (const ix of indexes) {
    const uid = ix['uid'] as string;
    settings[uid] = await get(`/indexes/${uid}/settings`);
    documents[uid] = (await get(`/indexes/${uid}/documents?limit=10000000`))['results'] as Json[];
  }
  const keys = key ? ((await get('/keys?limit=10000'))['results'] as Json[]) : [];
  const features = await get('/experimental-features');
  const tasks = (await get('/tasks?limit=1000000&reverse=true'))['results'] as Json[];
  // A batch's progressTrace is the time its processing took on the node that ran it (a
  // snapshot's own batch is finished in the copy before its processing is timed).
  const batches = ((await get('/batches?limit=1000000&reverse=true'))['results'] as Json[]).map(withoutProgressTrace);
  return { indexes, settings, documents, keys, features, tasks, batches };
}

export function digestOf(part: unknown): string {
  return createHash('sha256').update(JSON.stringify(part)).digest('hex');
}

/** One digest per part, so that a failure says which part differs. */
export function digests(s: BackupState): Record<keyof BackupState, string> {
  return {
    indexes: digestOf(s.indexes),
    settings: digestOf(s.settings),
    documents: digestOf(s.documents),
    keys: digestOf(s.keys),
    features: digestOf(s.features),
    tasks: digestOf(s.tasks),
    batches: digestOf(s.batches),
  };
}

/** Polls a task until it is finished. */
export async function waitTask(url: string, uid: number, key?: string, timeoutMs = 60_000): Promise<Json> {
  const get = reader(url, key);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const t = await get(`/tasks/${uid}`);
    if (['succeeded', 'failed', 'canceled'].includes(t['status'] as string)) return t;
    if (Date.now() > deadline) throw new Error(`task ${uid} did not finish: ${JSON.stringify(t)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
