import { ApiError, type ErrorBody } from '../errors/api-error.js';
import type { ApplyResult } from '../tasks/state-machine.js';

/** The entry was not committed at the index it was proposed at: a retry is safe. */
export class Superseded extends Error {}

/** Appended, but not seen committed in time: it may still commit later. */
export class ProposalTimeout extends Error {}

export function noLeader(ms: number): ApiError {
  return new ApiError(
    'no_leader',
    `No leader could accept the write within ${Math.round(ms / 1000)} s: the cluster has no quorum right now. Retry later; searches are still served.`,
  );
}

/** A write whose fate is unknown: retrying blindly could register it twice. */
export function unconfirmed(ms: number, why: string): ApiError {
  return new ApiError(
    'no_leader',
    `The cluster did not confirm the write within ${Math.round(ms / 1000)} s (${why}). It may still be applied: check \`GET /tasks\` before retrying.`,
  );
}

export function removedError(): ApiError {
  return new ApiError('cluster_unavailable', 'This node was removed from the cluster and accepts no more writes. Send writes to a member.');
}

export interface Applied {
  index: number;
  result: ApplyResult;
}

interface Pending {
  term: number;
  resolve(r: Applied): void;
  reject(e: unknown): void;
}

/**
 * Proposals this node appended as leader, by log index, waiting to be applied. The entry that
 * shows up at that index settles them: the same term means it is ours (entries are unique by
 * index and term), another term means a newer leader overwrote it.
 */
export class PendingProposals {
  private readonly byIndex = new Map<number, Pending>();

  track(pos: { index: number; term: number }, timeoutMs: number): Promise<Applied> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.byIndex.get(pos.index) !== entry) return;
        this.byIndex.delete(pos.index);
        reject(new ProposalTimeout(`entry ${pos.index} not committed in time`));
      }, Math.max(1, timeoutMs));
      const entry: Pending = {
        term: pos.term,
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      this.byIndex.set(pos.index, entry);
    });
  }

  /** The entry at `index` (of `term`) was applied with `result`. */
  settle(index: number, term: number, result: ApplyResult): void {
    const p = this.byIndex.get(index);
    if (!p) return;
    this.byIndex.delete(index);
    if (p.term === term) p.resolve({ index, result });
    else p.reject(new Superseded());
  }

  /** A snapshot skipped over these entries: whether they committed there is unknown. */
  skippedUpTo(index: number): void {
    for (const [i, p] of this.byIndex) {
      if (i > index) continue;
      this.byIndex.delete(i);
      p.reject(new ProposalTimeout('replaced by a snapshot from the leader'));
    }
  }

  rejectAll(e: unknown): void {
    for (const p of this.byIndex.values()) p.reject(e);
    this.byIndex.clear();
  }
}

export function encodeResult(r: ApplyResult): { resultJson: string; errorJson: string } {
  if (r.kind === 'config' && r.result instanceof ApiError) {
    return { resultJson: '', errorJson: JSON.stringify(r.result.toJSON()) };
  }
  if (r.kind === 'refused') return { resultJson: JSON.stringify({ kind: 'refused', error: r.error.toJSON() }), errorJson: '' };
  return { resultJson: JSON.stringify(r), errorJson: '' };
}

const revive = (e: ErrorBody): ApiError => new ApiError(e.code as never, e.message);

export function decodeResult(resultJson: string, errorJson: string): ApplyResult {
  if (errorJson) return { kind: 'config', result: revive(JSON.parse(errorJson) as ErrorBody) };
  const r = JSON.parse(resultJson) as ApplyResult;
  // An error crosses as its JSON body.
  if (r.kind === 'refused') return { kind: 'refused', error: revive(r.error as unknown as ErrorBody) };
  return r;
}
