// Requests a leader takes from its own clients: proposals, membership
// changes, leadership transfer, and the transport's delivery reports.

import { encodeConfChange, validateConfChange } from './conf-change.js';
import { ProposalError } from './errors.js';
import { bcastAppend, maybeSendAppend, sendTimeoutNow } from './raft-leader.js';
import type { Raft } from './raft.js';
import { NONE, type ConfChange, type EntryType, type NodeId } from './types.js';

function checkCanPropose(r: Raft): void {
  if (r.role !== 'leader') {
    throw new ProposalError('notLeader', `${r.id} is not the leader`, r.lead);
  }
  if (!r.tracker.progress.has(r.id)) {
    throw new ProposalError('removed', `${r.id} is no longer a member`);
  }
  if (r.leadTransferee !== NONE) {
    throw new ProposalError(
      'transferInProgress',
      `leadership is being transferred from ${r.id} to ${r.leadTransferee}`,
      r.leadTransferee,
    );
  }
}

export function propose(r: Raft, type: EntryType, data: Uint8Array): { index: number; term: number } {
  checkCanPropose(r);
  if (!r.appendEntries([{ type, data }])) {
    throw new ProposalError('tooManyUncommitted', `${r.id} holds too many uncommitted bytes`, r.id);
  }
  bcastAppend(r);
  return { index: r.log.lastIndex(), term: r.term };
}

export function proposeConfChange(r: Raft, cc: ConfChange): { index: number; term: number } {
  checkCanPropose(r);
  if (r.pendingConfIndex > r.log.applied) {
    throw new ProposalError(
      'confChangePending',
      `a membership change (or the leader's first entry) at ${r.pendingConfIndex} is not applied yet (applied ${r.log.applied})`,
      r.id,
    );
  }
  const reason = validateConfChange(r.tracker.confState(), cc);
  if (reason !== undefined) throw new ProposalError('invalidConfChange', reason, r.id);
  const pr = r.tracker.progress.get(cc.nodeId);
  if (cc.type === 'addVoter' && pr?.isLearner) {
    // Promoting a learner that lags would stall commits until it catches up.
    if (pr.state !== 'replicate' || pr.match + r.cfg.learnerCatchUpSlack < r.log.committed) {
      throw new ProposalError(
        'learnerNotCaughtUp',
        `learner ${cc.nodeId} is at ${pr.match} (${pr.state}), commit is ${r.log.committed}`,
        r.id,
      );
    }
  }
  const res = propose(r, 'confChange', encodeConfChange(cc));
  r.pendingConfIndex = res.index;
  return res;
}

export function transferLeadership(r: Raft, to: NodeId): void {
  if (r.role !== 'leader') throw new ProposalError('notLeader', `${r.id} is not the leader`, r.lead);
  const pr = r.tracker.progress.get(to);
  if (pr === undefined || pr.isLearner) {
    throw new ProposalError('invalidTransferee', `${to} is not a voter known to ${r.id}`, r.id);
  }
  if (r.leadTransferee !== NONE) {
    if (r.leadTransferee === to) return;
    r.leadTransferee = NONE;
  }
  if (to === r.id) return;
  // The transfer must finish within one election timeout or it is abandoned.
  r.electionElapsed = 0;
  r.leadTransferee = to;
  if (pr.match === r.log.lastIndex()) sendTimeoutNow(r, to);
  else maybeSendAppend(r, to, true);
}

export function reportUnreachable(r: Raft, id: NodeId): void {
  if (r.role !== 'leader') return;
  const pr = r.tracker.progress.get(id);
  // Optimistic streaming to an unreachable peer only fills its window.
  if (pr?.state === 'replicate') pr.becomeProbe();
}

export function reportSnapshot(r: Raft, id: NodeId, ok: boolean): void {
  if (r.role !== 'leader') return;
  const pr = r.tracker.progress.get(id);
  if (pr === undefined || pr.state !== 'snapshot') return;
  if (!ok) pr.pendingSnapshot = 0;
  pr.becomeProbe();
  // Wait for the follower's answer (or a heartbeat) before probing again.
  pr.probeSent = true;
}
