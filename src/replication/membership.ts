import { ApiError } from '../errors/api-error.js';
import type { StatusResponse } from '../gen/trine/v1/cluster.js';
import { ProposalError, type ConfChange, type ConfState } from '../raft/core/index.js';
import { encodeContext, type PeerSpec } from './cluster-peers.js';
import type { RaftReplicator } from './raft-replicator.js';
import type { ClusterMember, ClusterView } from './replicator.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long a node started with `--join` keeps asking before it gives up and exits. */
const JOIN_PATIENCE_MS = 60_000;
// How long a stopping leader waits to hear from a voter before stopping without a hand-over:
// one election timeout at the default tick.
const HANDOVER_CONTACT_WAIT_MS = 1_000;

/**
 * Membership and leadership: joining a running cluster, adding a node as a learner and
 * promoting it once it has caught up, removing a node, handing leadership over (before a
 * planned stop), and the cluster-wide status. Requests reaching a follower are forwarded to
 * the leader; the RPC handlers call the `…AsLeader` variants, which never forward again.
 */
export class Membership {
  private timer: NodeJS.Timeout | null = null;
  private promoting = false;

  constructor(private readonly r: RaftReplicator) {}

  start(): void {
    if (!this.r.clustered) return;
    this.timer = setInterval(() => void this.promoteCaughtUp(), 300);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Asks the other initial members whether a cluster already exists: the highest term seen,
   * and the address of a member that knows a leader (null while the cluster is still forming).
   */
  async probeExisting(others: PeerSpec[]): Promise<{ term: number; via: string | null } | null> {
    const answers = await Promise.allSettled(others.map((p) => this.r.peers.status(p.id, 1500)));
    let term = -1;
    let via: string | null = null;
    answers.forEach((a, i) => {
      if (a.status !== 'fulfilled' || a.value.commitIndex === 0) return;
      term = Math.max(term, a.value.term);
      if (a.value.leaderId) via ??= others[i]!.addr;
    });
    return term >= 0 ? { term, via } : null;
  }

  /**
   * A new node asks a member to add it (`rejoin`: a member that lost its data asks to be
   * reset); it learns the members' addresses from the answer.
   */
  async join(addr: string, rejoin = false): Promise<void> {
    const r = this.r;
    const deadline = Date.now() + JOIN_PATIENCE_MS;
    let last = '';
    for (;;) {
      try {
        const res = await r.peers.joinVia(addr, { nodeId: r.nodeId, raftAddr: r.raftAddr, httpAddr: r.httpAddr, rejoin }, 15_000);
        if (res.accepted) {
          for (const m of res.members) {
            if (m.id === r.nodeId || !m.raftAddr || !r.peers.setAddress(m.id, m.raftAddr)) continue;
            r.transport?.setPeer(m.id, m.raftAddr);
          }
          const wb = r.d.store.batch();
          r.peers.stage(wb);
          await wb.commit({ sync: true });
          r.d.log.info({ via: addr, leader: res.leaderId }, rejoin ? 'rejoined the cluster as a learner' : 'joined the cluster as a learner');
          return;
        }
        last = res.message;
      } catch (e) {
        last = (e as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`could not join the cluster through ${addr}: ${last}`);
      await sleep(500);
    }
  }

  members(): PeerSpec[] {
    return this.r.peers.all();
  }

  private leaderOrThrow(): string {
    const leader = this.r.leaderId();
    if (!leader || !this.r.peers.has(leader)) throw new ApiError('no_leader', 'The cluster has no leader right now: retry in a moment.');
    return leader;
  }

  /** Proposes a membership change, retrying while an earlier one is still being applied. */
  private async change(cc: ConfChange): Promise<void> {
    const deadline = Date.now() + this.r.writeTimeoutMs;
    for (;;) {
      try {
        await this.r.proposeConfChange(cc, Math.max(1, deadline - Date.now()));
        return;
      } catch (e) {
        if (!(e instanceof ProposalError)) throw e;
        if (e.code === 'invalidConfChange') throw new ApiError('bad_request', `The membership change was refused: ${e.message}.`);
        if (e.code === 'notLeader') throw e;
        if (Date.now() > deadline) throw new ApiError('no_leader', `The membership change could not be proposed in time: ${e.message}.`);
      }
      await sleep(50);
    }
  }

  /** The leader applied a change: wait (bounded) until this node has too, so that its answer shows it. */
  private async applied(pred: (cs: ConfState) => boolean): Promise<void> {
    await this.r.waitUntil(() => pred(this.r.currentConfState()), this.r.writeTimeoutMs);
  }

  async addNode(id: string, raftAddr: string, rejoin = false): Promise<void> {
    const r = this.r;
    if (!r.isLeader()) {
      const leaderAddr = r.peers.raftAddress(this.leaderOrThrow())!;
      const res = await r.peers.joinVia(leaderAddr, { nodeId: id, raftAddr, httpAddr: '', rejoin }, r.writeTimeoutMs);
      if (!res.accepted) throw new ApiError('bad_request', `The leader refused to add node \`${id}\`: ${res.message}`);
      await this.applied((cs) => cs.voters.includes(id) || cs.learners.includes(id));
      return;
    }
    await this.addNodeAsLeader(id, raftAddr, rejoin);
  }

  async addNodeAsLeader(id: string, raftAddr: string, rejoin = false): Promise<void> {
    const r = this.r;
    const st = r.driver.status();
    const cs = st.confState;
    if (cs.voters.includes(id) || cs.learners.includes(id)) {
      // A member that lost its data while this leader believes it holds entries would be sent a
      // commit index beyond its log: remove it and add it back, so that it starts from nothing.
      // Otherwise (a retried join, a member that never held anything) there is nothing to change.
      if (!rejoin || (st.progress[id]?.match ?? 0) === 0) return;
      if (id === r.nodeId) throw new ApiError('bad_request', 'The leader cannot reset itself.');
      r.d.log.warn({ node: id }, 'a member lost its data: removing it and adding it back as a learner');
      await this.change({ type: 'removeNode', nodeId: id });
    }
    if (r.peers.setAddress(id, raftAddr)) r.transport?.setPeer(id, raftAddr);
    await this.change({ type: 'addLearner', nodeId: id, context: encodeContext({ raftAddr }) });
  }

  async removeNode(id: string): Promise<void> {
    const r = this.r;
    // The leader cannot remove itself: it hands leadership over first, wherever asked.
    if (r.isLeader() && id === r.nodeId) await this.transferAsLeader(null, 5000);
    else if (!r.isLeader() && this.leaderOrThrow() === id) await this.transfer(null);
    if (!r.isLeader()) {
      const res = await r.peers.leave(this.leaderOrThrow(), id, r.writeTimeoutMs);
      if (!res.accepted) throw new ApiError('bad_request', `The leader refused to remove node \`${id}\`: ${res.message}`);
      await this.applied((cs) => !cs.voters.includes(id) && !cs.learners.includes(id));
      return;
    }
    await this.removeNodeAsLeader(id);
  }

  async removeNodeAsLeader(id: string): Promise<void> {
    const cs = this.r.driver.status().confState;
    if (!cs.voters.includes(id) && !cs.learners.includes(id)) {
      throw new ApiError('bad_request', `Node \`${id}\` is not a member of the cluster.`);
    }
    if (id === this.r.nodeId) throw new ApiError('bad_request', 'The leader cannot remove itself: transfer leadership first.');
    await this.change({ type: 'removeNode', nodeId: id });
  }

  async transfer(to: string | null): Promise<string> {
    const r = this.r;
    if (r.isLeader()) return this.transferAsLeader(to, 5000);
    const res = await r.peers.transferLeadership(this.leaderOrThrow(), to ?? '', 5000);
    if (!res.accepted) throw new ApiError('bad_request', `The leader refused to hand leadership over: ${res.message}`);
    return res.leaderId;
  }

  /** Hands leadership to `to`, or to the most caught-up voter; resolves with the new leader. */
  async transferAsLeader(to: string | null, timeoutMs: number): Promise<string> {
    const r = this.r;
    const st = r.driver.status();
    const candidates = st.confState.voters.filter((v) => v !== r.nodeId);
    let target = to;
    if (target === null) {
      const ranked = candidates
        .map((id) => ({ id, pr: st.progress[id] }))
        .filter((c) => c.pr !== undefined)
        // Streaming to it (the transport has not found it unreachable), heard from lately, then the
        // most caught up: the transfer completes sooner, and a peer just stopped is not picked.
        .sort(
          (a, b) =>
            Number(b.pr!.state === 'replicate') - Number(a.pr!.state === 'replicate') ||
            Number(b.pr!.recentActive) - Number(a.pr!.recentActive) ||
            b.pr!.match - a.pr!.match,
        );
      target = ranked[0]?.id ?? null;
      if (target === null) throw new ApiError('bad_request', 'No other voter to hand leadership to.');
    }
    if (target === r.nodeId) return target;
    if (!candidates.includes(target)) throw new ApiError('bad_request', `Node \`${target}\` is not a voter of the cluster.`);
    r.driver.transferLeadership(target);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const lead = r.leaderId();
      if (!r.isLeader() && lead && lead !== r.nodeId) return lead;
      await sleep(20);
    }
    throw new ApiError('no_leader', `Leadership did not move to \`${target}\` within ${timeoutMs} ms.`);
  }

  /** Before a planned stop: a leader of a multi-node cluster hands over, so writes barely pause. */
  async handOver(timeoutMs: number): Promise<void> {
    const r = this.r;
    if (!r.isLeader()) return;
    // A voter counts as in touch once it streams and has answered since the last check-quorum
    // round. Both reset now and then (an election won, each election timeout), and the answers
    // come back within a heartbeat or two; wait that long before deciding that nobody is in touch.
    const inTouch = (): boolean => {
      const st = r.driver.status();
      return st.confState.voters.some((v) => v !== r.nodeId && st.progress[v]?.recentActive && st.progress[v]?.state === 'replicate');
    };
    const settle = Date.now() + Math.min(timeoutMs, HANDOVER_CONTACT_WAIT_MS);
    while (!inTouch() && Date.now() < settle && r.isLeader()) await sleep(20);
    // Nobody in touch to take over (the others are down or stopping too): just stop.
    if (!r.isLeader() || !inTouch()) return;
    try {
      const lead = await this.transferAsLeader(null, timeoutMs);
      r.d.log.info({ to: lead }, 'handed leadership over before stopping');
    } catch (e) {
      r.d.log.warn({ err: (e as Error).message }, 'could not hand leadership over before stopping');
    }
  }

  /** Learners are a catch-up stage: the leader promotes each once it is close enough to the log. */
  private async promoteCaughtUp(): Promise<void> {
    const r = this.r;
    if (this.promoting || !r.isLeader()) return;
    const st = r.driver.status();
    for (const id of st.confState.learners) {
      if (st.progress[id]?.state !== 'replicate') continue;
      this.promoting = true;
      try {
        // The core refuses (learnerNotCaughtUp) while the learner lags too far.
        await r.proposeConfChange({ type: 'addVoter', nodeId: id }, r.writeTimeoutMs);
        r.d.log.info({ node: id }, 'promoted a caught-up learner to voter');
      } catch (e) {
        if (!(e instanceof ProposalError)) r.d.log.debug({ node: id, err: (e as Error).message }, 'promotion not confirmed');
      } finally {
        this.promoting = false;
      }
      return;
    }
  }

  /** This node's status, as the Status RPC answers it. */
  selfStatus(): StatusResponse {
    const r = this.r;
    const st = r.driver.status();
    // Membership as this node's state machine applied it: the core takes a conf change into
    // account only once the whole Ready is advanced, a moment later.
    const cs = r.currentConfState();
    const learners = cs.learners;
    return {
      id: st.id,
      role: r.removed ? 'removed' : st.role === 'follower' && learners.includes(st.id) ? 'learner' : st.role,
      term: st.term,
      leaderId: st.lead,
      commitIndex: st.commit,
      appliedIndex: r.appliedIndex,
      lastIndex: st.lastIndex,
      httpAddr: r.httpAddr,
      voters: cs.voters,
      learners,
      peers: Object.entries(st.progress).map(([id, pr]) => ({
        id,
        raftAddr: r.peers.raftAddress(id) ?? '',
        httpAddr: '',
        matchIndex: pr.match,
        voter: !pr.isLearner,
        reachable: pr.recentActive,
      })),
    };
  }

  /** Every member's status as seen from here; members that do not answer in time show nulls. */
  async view(timeoutMs = 1000): Promise<ClusterView> {
    const r = this.r;
    const self = this.selfStatus();
    const ids = [...self.voters, ...self.learners];
    if (!ids.includes(self.id)) ids.push(self.id);
    const answers = new Map<string, StatusResponse | null>([[self.id, self]]);
    await Promise.all(
      ids
        .filter((id) => id !== self.id)
        .map(async (id) => {
          try {
            answers.set(id, await r.peers.status(id, timeoutMs));
          } catch {
            answers.set(id, null);
          }
        }),
    );
    const leaderId = self.leaderId || [...answers.values()].find((a) => a?.role === 'leader')?.id || null;
    const leader = leaderId ? (answers.get(leaderId) ?? null) : null;
    const members: ClusterMember[] = ids.map((id) => {
      const a = answers.get(id) ?? null;
      return {
        id,
        voter: self.voters.includes(id),
        raftAddr: r.peers.raftAddress(id) ?? null,
        httpAddr: a?.httpAddr || null,
        role: a?.role ?? null,
        term: a?.term ?? null,
        commitIndex: a?.commitIndex ?? null,
        appliedIndex: a?.appliedIndex ?? null,
        lag: a && leader ? Math.max(0, leader.commitIndex - a.appliedIndex) : null,
        reachable: a !== null,
      };
    });
    return { nodeId: self.id, leader: leaderId, term: self.term, members };
  }
}
