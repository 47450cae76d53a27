// Which shard owns a document, by the reference's rule (rendezvous hashing): each shard name is
// hashed with the document id (XXH3 of the name, 0xff, the id, 0xff: how the reference hashes
// the pair) and the shard with the highest hash owns the document. Adding a shard moves only
// the documents it now wins; removing one moves only its own.

import type { Network } from './network.js';
import { xxh3 } from './xxh3.js';

const encoder = new TextEncoder();

function pairHash(shard: string, docid: string): bigint {
  const a = encoder.encode(shard);
  const b = encoder.encode(docid);
  const bytes = new Uint8Array(a.length + b.length + 2);
  bytes.set(a, 0);
  bytes[a.length] = 0xff;
  bytes.set(b, a.length + 1);
  bytes[bytes.length - 1] = 0xff;
  return xxh3(bytes);
}

/** The shard of `shards` owning document `docid`, or null when there is no shard. */
export function shardOf(shards: readonly string[], docid: string): string | null {
  let best: string | null = null;
  let bestHash = -1n;
  for (const s of shards) {
    const h = pairHash(s, docid);
    // On a tie the later name wins, as in the reference (its maximum keeps the last one).
    if (h > bestHash || (h === bestHash && best !== null && s > best)) {
      best = s;
      bestHash = h;
    }
  }
  return best;
}

/** Whether the network shards documents: it has a leader (and then at least one shard). */
export function isSharded(network: Network): boolean {
  return network.leader !== null && Object.keys(network.shards).length > 0;
}

/**
 * Which documents this instance keeps in a sharded network: those of the shards it is a remote
 * of. Null when the network does not shard (every document is kept).
 */
export function ownedDocuments(network: Network): ((docid: string) => boolean) | null {
  if (!isSharded(network)) return null;
  const names = Object.keys(network.shards).sort();
  const own = new Set(names.filter((n) => network.self !== null && network.shards[n]!.remotes.includes(network.self)));
  return (docid) => {
    const s = shardOf(names, docid);
    return s !== null && own.has(s);
  };
}
