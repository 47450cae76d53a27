import { ApiError } from '../../errors/api-error.js';
import { KeySpace } from '../../store/keys.js';
import type { KvReader, WriteBatch } from '../../store/kv.js';

/**
 * The network (`/network`): the other Trine (or reference) instances this one knows by name,
 * for federated searches that send some of their queries there (`federationOptions.remote`),
 * and how they share the data (`shards`, `leader`). Node-wide state: changed through the
 * replicated log, directly when there is no leader, by a `networkTopologyChange` task
 * otherwise, so every node of the cluster holds the same network.
 */

export interface Remote {
  url: string;
  searchApiKey: string | null;
  writeApiKey: string | null;
}

export interface Shard {
  /** Remote names, sorted. */
  remotes: string[];
}

export interface Network {
  self: string | null;
  remotes: Record<string, Remote>;
  shards: Record<string, Shard>;
  leader: string | null;
  version: string;
}

export type RemotePatch = { url?: string | null; searchApiKey?: string | null; writeApiKey?: string | null };
export type ShardPatch = { remotes?: string[] | null; addRemotes?: string[] | null; removeRemotes?: string[] | null };

/** A `PATCH /network` body: absent keeps, `null` resets (a remote or shard set to `null` is removed). */
export interface NetworkPatch {
  self?: string | null;
  leader?: string | null;
  remotes?: Record<string, RemotePatch | null> | null;
  shards?: Record<string, ShardPatch | null> | null;
}

export const NIL_VERSION = '00000000-0000-0000-0000-000000000000';

export function defaultNetwork(): Network {
  return { self: null, remotes: {}, shards: {}, leader: null, version: NIL_VERSION };
}

/** Keys sorted, as the reference's maps are. */
function sorted<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function checkUrl(name: string, url: string): string {
  let reason: string | null = null;
  if (!/^[a-z][a-z0-9+.-]*:/i.test(url)) reason = 'relative URL without a base';
  else {
    try {
      new URL(url);
    } catch {
      reason = 'invalid URL';
    }
  }
  if (reason) throw new ApiError('invalid_network_url', `Invalid \`.remotes.${name}.url\` (\`${url}\`): ${reason}`);
  return url;
}

function mergeShard(old: readonly string[], patch: ShardPatch): string[] {
  const set = new Set(patch.remotes ?? old);
  for (const r of patch.addRemotes ?? []) set.add(r);
  for (const r of patch.removeRemotes ?? []) set.delete(r);
  return [...set].sort();
}

/**
 * The reference's merge of a patch into the network, with its checks: only the leader (when
 * there is one) may change it; with a leader, the leader is a remote and there is at least
 * one shard, each owned by known remotes. `version` is the new version, decided by the caller.
 */
export function mergeNetwork(old: Network, patch: NetworkPatch, version: string, fromLeader = false): Network {
  const self = patch.self === undefined ? old.self : patch.self;
  const leader = patch.leader === undefined ? old.leader : patch.leader;
  // The leader sends its changes on to the other remotes, which take them.
  if (leader !== null && leader !== self && !fromLeader) {
    throw new ApiError(
      'not_leader',
      `This instance is not the leader of the network: only \`${leader}\` may change it${self === null ? '' : ` (this instance is \`${self}\`)`}.`,
    );
  }

  let shards: Record<string, Shard>;
  if (patch.shards === null) shards = {};
  else if (patch.shards === undefined) shards = structuredClone(old.shards);
  else {
    shards = structuredClone(old.shards);
    for (const [name, s] of Object.entries(patch.shards)) {
      if (s === null) delete shards[name];
      else shards[name] = { remotes: mergeShard(old.shards[name]?.remotes ?? [], s) };
    }
  }

  let remotes: Record<string, Remote>;
  if (patch.remotes === null) remotes = {};
  else if (patch.remotes === undefined) remotes = structuredClone(old.remotes);
  else {
    remotes = structuredClone(old.remotes);
    for (const [name, r] of Object.entries(patch.remotes)) {
      const before = old.remotes[name];
      if (r === null) {
        // A removed remote leaves every shard it owned.
        delete remotes[name];
        for (const s of Object.values(shards)) s.remotes = s.remotes.filter((x) => x !== name);
        continue;
      }
      if (before) {
        if (r.url === null) throw new ApiError('invalid_network_url', `Field \`.remotes.${name}.url\` cannot be set to \`null\``);
        remotes[name] = {
          url: r.url === undefined ? before.url : checkUrl(name, r.url),
          searchApiKey: r.searchApiKey === undefined ? before.searchApiKey : r.searchApiKey,
          writeApiKey: r.writeApiKey === undefined ? before.writeApiKey : r.writeApiKey,
        };
      } else {
        if (r.url === undefined || r.url === null) throw new ApiError('missing_network_url', `Missing field \`.remotes.${name}.url\``);
        remotes[name] = { url: checkUrl(name, r.url), searchApiKey: r.searchApiKey ?? null, writeApiKey: r.writeApiKey ?? null };
      }
    }
  }
  for (const [name, s] of Object.entries(shards)) if (s.remotes.length === 0) delete shards[name];

  if (leader !== null) {
    if (!remotes[leader]) throw new ApiError('invalid_network_remotes', `leader \`${leader}\` is missing from remotes`);
    if (Object.keys(shards).length === 0) throw new ApiError('invalid_network_shards', 'there must be at least one shard owned by at least one remote');
    for (const [name, s] of Object.entries(shards)) {
      for (const r of s.remotes) if (!remotes[r]) throw new ApiError('invalid_network_shards', `unknown remote \`${r}\` in \`.${name}.remotes\``);
    }
  }
  return { self, remotes: sorted(remotes), shards: sorted(shards), leader, version };
}

export type NetworkOp = { op: 'patch'; patch: NetworkPatch; version: string } | { op: 'set'; network: Network };

const NETWORK = new KeySpace('nw').key('network');

/** Node-wide state kept through the log: registered with the task state machine as a config handler. */
export class NetworkStore {
  static readonly COMMAND = 'network';
  private state: Network = defaultNetwork();

  get(): Network {
    return this.state;
  }

  /** A remote by name, or this instance when `name` is its own. */
  remote(name: string): Remote | undefined {
    return Object.prototype.hasOwnProperty.call(this.state.remotes, name) ? this.state.remotes[name] : undefined;
  }

  apply(raw: unknown, _at: number, wb: WriteBatch): unknown {
    const op = raw as NetworkOp;
    const next = op.op === 'patch' ? mergeNetwork(this.state, op.patch, op.version) : op.network;
    this.put(wb, next);
    this.publish(next);
    return next;
  }

  put(wb: WriteBatch, network: Network): void {
    wb.put(NETWORK, JSON.stringify(network));
  }

  publish(network: Network): void {
    this.state = network;
  }

  async load(reader: KvReader): Promise<void> {
    const raw = await reader.get(NETWORK);
    this.state = raw ? { ...defaultNetwork(), ...(JSON.parse(raw.toString()) as Network) } : defaultNetwork();
  }
}
