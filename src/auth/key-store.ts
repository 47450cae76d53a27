import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Authority } from '../util/request-context.js';
import { ApiError } from '../errors/api-error.js';
import { KeySpace } from '../store/keys.js';
import type { KvReader, WriteBatch } from '../store/kv.js';
import type { ConfigHandler } from '../tasks/state-machine.js';
import { expandActions } from './actions.js';
import { parseUuid } from '../util/uuid.js';

/**
 * API keys. Node-wide state changed only through the replicated log (`ConfigHandler`), so every
 * node of a cluster holds the same keys. Key values are never stored: a key's value is
 * HMAC-SHA256(master key, uid) in lowercase hex, as the reference derives it, so it is the
 * same on every node and after a restart, and changes when the master key does.
 */

export interface ApiKey {
  uid: string;
  name: string | null;
  description: string | null;
  actions: string[];
  indexes: string[];
  /** Epoch ms, or null for a key that never expires. */
  expiresAt: number | null;
  createdAt: number;
  updatedAt: number;
  /** Creation order, so that keys created in the same millisecond still list newest first. */
  seq: number;
}

export type NewKey = Pick<ApiKey, 'uid' | 'name' | 'description' | 'actions' | 'indexes' | 'expiresAt'>;

/**
 * What goes through the log. Uids are drawn by the proposer and carried in the op, never drawn
 * in `apply`, which must give the same result on every node. `ref` is what the client named the
 * key by, for the not-found message.
 */
export type KeyOp =
  | { op: 'create'; key: NewKey }
  | { op: 'update'; uid: string; ref: string; name?: string | null; description?: string | null }
  | { op: 'delete'; uid: string; ref: string }
  | { op: 'defaults'; uids: string[] };

/** The reference's default keys, in its insertion order (so the newest-first list ends with Chat). */
export const DEFAULT_KEYS: readonly Pick<ApiKey, 'name' | 'description' | 'actions'>[] = [
  { name: 'Default Chat API Key', description: 'Use it to chat and search from the frontend', actions: ['chatCompletions', 'search'] },
  {
    name: 'Default Read-Only Admin API Key',
    description: 'Use it to read information across the whole database. Caution! Do not expose this key on a public frontend',
    actions: ['*.get', 'keys.get'],
  },
  {
    name: 'Default Admin API Key',
    description: 'Use it for anything that is not a search operation. Caution! Do not expose it on a public frontend',
    actions: ['*'],
  },
  { name: 'Default Search API Key', description: 'Use it to search from the frontend', actions: ['search'] },
];

const KEYS = new KeySpace('ak');
/**
 * The next key's `seq`, kept beside the keys: read back from the keys alone, it would go down
 * when the newest key was deleted, and a node that restarted would then number the next key
 * differently from one that did not.
 */
const NEXT_SEQ = new KeySpace('aq').key('next');

/** Lowercase hex HMAC-SHA256 of the hyphenated uid, keyed by the master key (reference derivation). */
export function deriveKey(masterKey: string, uid: string): string {
  return createHmac('sha256', masterKey).update(uid).digest('hex');
}

/** Equality of two secrets in time independent of where they differ (lengths hidden by hashing). */
export function secretEquals(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

export function keyNotFound(ref: string): ApiError {
  return new ApiError('api_key_not_found', `API key \`${ref}\` not found.`);
}

interface Entry {
  key: ApiKey;
  /** The derived value, kept to compare bearer tokens without recomputing HMACs per request. */
  value: Buffer | null;
  granted: Set<string>;
}

export class KeyStore implements ConfigHandler {
  static readonly COMMAND = 'apiKeys';
  private entries = new Map<string, Entry>();
  private nextSeq = 0;
  /** Bumped whenever a key may have gone (deleted, or the store reloaded): grants may need a second look. */
  revocations = 0;

  constructor(readonly masterKey: string | null) {}

  get size(): number {
    return this.entries.size;
  }

  isEmpty(): boolean {
    return this.entries.size === 0;
  }

  get(uid: string): ApiKey | undefined {
    return this.entries.get(uid)?.key;
  }

  /**
   * Whether the key a command was made with still exists (the same key, not one created
   * again under its uid) and had not expired at `at`. A key's actions and indexes never change
   * once created, so this is all such a command needs checked again.
   */
  authorizes(authority: Authority, at: number): boolean {
    const key = this.get(authority.key);
    return key !== undefined && key.createdAt === authority.createdAt && (key.expiresAt === null || at < key.expiresAt);
  }

  /** Expanded actions of a key (wildcards resolved), cached per key. */
  granted(uid: string): ReadonlySet<string> {
    return this.entries.get(uid)?.granted ?? new Set();
  }

  /** Newest first, as `GET /keys` lists them. */
  list(): ApiKey[] {
    return [...this.entries.values()].map((e) => e.key).sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq);
  }

  /** The key value shown to clients; empty without a master key, as the reference does. */
  keyValue(uid: string): string {
    return this.masterKey === null ? '' : deriveKey(this.masterKey, uid);
  }

  isMasterKey(token: string): boolean {
    return this.masterKey !== null && secretEquals(token, this.masterKey);
  }

  /**
   * The key whose value is `token`. Every stored value is compared, in constant time, without
   * stopping at a match, so timing says nothing about which keys exist or how close a guess is.
   */
  findByValue(token: string): ApiKey | null {
    if (this.masterKey === null || token.length !== 64) return null;
    const probe = Buffer.from(token, 'latin1');
    let found: ApiKey | null = null;
    for (const e of this.entries.values()) {
      if (e.value && timingSafeEqual(e.value, probe) && found === null) found = e.key;
    }
    return found;
  }

  /** `GET/PATCH/DELETE /keys/{uidOrKey}`: a UUID names the key by uid, anything else by value. */
  resolve(uidOrKey: string): ApiKey {
    const parsed = parseUuid(uidOrKey);
    if ('uuid' in parsed) {
      const k = this.get(parsed.uuid);
      if (!k) throw keyNotFound(parsed.uuid);
      return k;
    }
    const k = this.findByValue(uidOrKey);
    if (!k) throw keyNotFound(uidOrKey);
    return k;
  }

  apply(raw: unknown, at: number, wb: WriteBatch): unknown {
    const op = raw as KeyOp;
    switch (op.op) {
      case 'create': {
        if (this.entries.has(op.key.uid)) {
          throw new ApiError('api_key_already_exists', `\`uid\` field value \`${op.key.uid}\` is already an existing API key.`);
        }
        return this.put(wb, { ...op.key, createdAt: at, updatedAt: at, seq: this.nextSeq });
      }
      case 'update': {
        const cur = this.entries.get(op.uid)?.key;
        if (!cur) throw keyNotFound(op.ref);
        const next = { ...cur, updatedAt: at };
        if (op.name !== undefined) next.name = op.name;
        if (op.description !== undefined) next.description = op.description;
        return this.put(wb, next);
      }
      case 'delete': {
        if (!this.entries.has(op.uid)) throw keyNotFound(op.ref);
        this.entries.delete(op.uid);
        this.revocations++;
        wb.del(KEYS.key(op.uid));
        return null;
      }
      case 'defaults': {
        // Several nodes may propose the defaults; only the first applied while the store is
        // still empty creates them, on every node alike.
        if (!this.isEmpty() || op.uids.length !== DEFAULT_KEYS.length) return null;
        DEFAULT_KEYS.forEach((d, i) => {
          this.put(wb, { ...d, uid: op.uids[i]!, indexes: ['*'], expiresAt: null, createdAt: at, updatedAt: at, seq: this.nextSeq });
        });
        return null;
      }
      default:
        throw new Error(`unknown API key op ${JSON.stringify((op as { op?: unknown }).op)}`);
    }
  }

  async load(reader: KvReader): Promise<void> {
    const entries = new Map<string, Entry>();
    let seq = 0;
    for await (const { value } of reader.scan({ prefix: KEYS.prefix })) {
      const key = JSON.parse(value.toString('utf8')) as ApiKey;
      entries.set(key.uid, this.entry(key));
      seq = Math.max(seq, key.seq + 1);
    }
    const kept = await reader.get(NEXT_SEQ);
    this.entries = entries;
    this.nextSeq = Math.max(seq, kept ? Number(kept.toString('utf8')) : 0);
    this.revocations++;
  }

  private put(wb: WriteBatch, key: ApiKey): ApiKey {
    wb.put(KEYS.key(key.uid), JSON.stringify(key));
    this.entries.set(key.uid, this.entry(key));
    this.nextSeq = Math.max(this.nextSeq, key.seq + 1);
    wb.put(NEXT_SEQ, String(this.nextSeq));
    return key;
  }

  private entry(key: ApiKey): Entry {
    const value = this.masterKey === null ? null : Buffer.from(deriveKey(this.masterKey, key.uid), 'latin1');
    return { key, value, granted: expandActions(key.actions) };
  }
}

/** Writes a key as it was, uid and dates included (a dump import); `load` reads it back. */
export function stageKey(wb: WriteBatch, key: ApiKey): void {
  wb.put(KEYS.key(key.uid), JSON.stringify(key));
}

/**
 * Creates the default keys on a store that has none, the way the reference does at launch.
 *
 * Choice for a cluster: the node that leads proposes a `defaults` op carrying four uids it draws
 * (random UUID v4, as the reference's are); `apply` creates them only while the store is still
 * empty, so however many nodes propose, the first op applied wins and every node ends with the
 * same four keys. Nodes that do not lead wait until the keys reach them through the log. Runs
 * until the store holds keys or `stopped()` says the node is closing.
 */
export async function ensureDefaultKeys(
  keys: KeyStore,
  deps: {
    isLeader(): boolean;
    configure(name: string, op: unknown): Promise<unknown>;
    stopped(): boolean;
    onError(e: unknown): void;
  },
): Promise<void> {
  while (keys.isEmpty() && !deps.stopped()) {
    if (deps.isLeader()) {
      try {
        const op: KeyOp = { op: 'defaults', uids: DEFAULT_KEYS.map(() => randomUUID()) };
        await deps.configure(KeyStore.COMMAND, op);
        continue;
      } catch (e) {
        deps.onError(e);
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
