// What goes wrong, and when: the per-seed Raft settings and the random faults
// and membership changes the simulator injects during its chaos phase.

import { randInt, type NodeId, type Rand } from '../../../src/raft/core/index.js';
import type { SimRaftOptions } from './sim-node.js';
import type { Simulation } from './simulator.js';

function pick<T>(rand: Rand, xs: readonly T[]): T | undefined {
  return xs.length === 0 ? undefined : xs[randInt(rand, 0, xs.length)];
}

function shuffle<T>(rand: Rand, xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = randInt(rand, 0, i + 1);
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

/** Small limits so that batching, windows and snapshots all get exercised. */
export function randomRaftOptions(rand: Rand): SimRaftOptions {
  return {
    electionTick: 10,
    heartbeatTick: randInt(rand, 1, 4),
    preVote: rand() < 0.8,
    checkQuorum: rand() < 0.8,
    maxSizePerMsg: pick(rand, [40, 200, 4096])!,
    maxInflightMsgs: randInt(rand, 1, 9),
    snapshotThreshold: randInt(rand, 5, 40),
    compactionMargin: randInt(rand, 0, 6),
    learnerCatchUpSlack: randInt(rand, 0, 10),
    followerLeaseMs: rand() < 0.75 ? randInt(rand, 15, 90) : 0,
  };
}

export function chooseChaos(sim: Simulation): void {
  const rand = sim.rand;
  const up = [...sim.nodes.values()].filter((n) => n.up);
  const members = [...sim.knownConf.voters, ...sim.knownConf.learners];
  const r = rand();
  if (r < 0.22) {
    // Crash a node, the leader more often than not.
    const leader = sim.leader();
    const victim = leader && rand() < 0.5 ? leader : pick(rand, up);
    if (!victim) return;
    sim.trace(`crash ${victim.id}`);
    victim.crash();
    sim.stats.crashes++;
    sim.schedule(randInt(rand, 10, 600), { kind: 'restart', node: victim.id });
  } else if (r < 0.45) {
    // Split the cluster; often the leader ends up with a minority.
    const ids = shuffle(rand, [...members]);
    const leader = sim.leader();
    const k = randInt(rand, 1, Math.max(2, Math.floor(ids.length / 2) + 1));
    let minority = ids.slice(0, k);
    if (leader && rand() < 0.5 && !minority.includes(leader.id)) minority = [leader.id, ...minority.slice(1)];
    const rest = [...sim.nodes.keys()].filter((id) => !minority.includes(id));
    sim.trace(`partition ${minority.join(',')} | ${rest.join(',')}`);
    sim.net.partition([minority, rest]);
    sim.schedule(randInt(rand, 50, 800), { kind: 'heal' });
  } else if (r < 0.55) {
    const a = pick(rand, members);
    const b = pick(rand, members);
    if (a && b && a !== b) {
      sim.trace(`cut ${a} -> ${b}`);
      sim.net.block(a, b, true);
      sim.schedule(randInt(rand, 50, 500), { kind: 'heal' });
    }
  } else if (r < 0.72) {
    const bad = rand() < 0.5;
    sim.net.quality = {
      dropRate: bad ? rand() * 0.15 : 0,
      dupRate: rand() * 0.08,
      minDelay: 1,
      maxDelay: 2 + rand() * 18,
      slowRate: rand() * 0.05,
    };
    sim.trace(() => `network ${JSON.stringify(sim.net.quality)}`);
  } else if (r < 0.8) {
    const leader = sim.leader();
    const to = pick(rand, sim.knownConf.voters);
    if (leader && to) {
      try {
        leader.rn!.transferLeadership(to);
        sim.trace(`${leader.id} transfers leadership to ${to}`);
        sim.touched(leader);
      } catch {
        // Not a voter it knows of: nothing to do.
      }
    }
  } else if (r < 0.85) {
    sim.trace('heal network');
    sim.net.heal();
  } else {
    // A brief blip cutting the leader off: leadership changes hands while
    // its last entries may have reached nobody.
    const leader = sim.leader();
    if (!leader) return;
    sim.trace(`blip: isolate leader ${leader.id}`);
    sim.net.partition([[leader.id], [...sim.nodes.keys()].filter((id) => id !== leader.id)]);
    sim.schedule(randInt(rand, 5, 60), { kind: 'heal' });
  }
}

/** At most this many distinct servers over a run. */
const MAX_SERVERS = 8;

export function chooseMembershipOp(sim: Simulation): void {
  const rand = sim.rand;
  const leader = sim.leader();
  if (!leader) return;
  const cs = leader.rn!.status().confState;
  const r = rand();
  if (r < 0.35) {
    // Add a learner: a removed server with its disk intact, or a new one.
    const returning = [...sim.nodes.values()].filter((n) => n.decommissioned && !sim.isMember(n.id));
    let node = rand() < 0.5 ? pick(rand, returning) : undefined;
    let fresh = false;
    if (!node) {
      if (sim.nodes.size >= MAX_SERVERS) return;
      node = sim.addNode(sim.newNodeId());
      fresh = true;
    }
    if (cs.voters.includes(node.id) || cs.learners.includes(node.id)) return;
    node.decommissioned = false;
    node.memberEpoch++;
    if (!node.up) {
      sim.trace(`${node.id} starts (${fresh ? 'new server' : 'returning with its disk'})`);
      node.start();
      sim.startTicking(node);
    }
    if (!sim.proposeConfChange('addLearner', node.id)) {
      node.crash();
      node.decommissioned = true;
    }
  } else if (r < 0.7) {
    const learner = pick(rand, cs.learners);
    if (learner) sim.proposeConfChange('addVoter', learner);
  } else {
    // Remove someone, but keep at least two voters.
    const candidates: NodeId[] = [...cs.learners, ...(cs.voters.length > 2 ? cs.voters : [])];
    const victim = pick(rand, candidates);
    if (victim) sim.proposeConfChange('removeNode', victim);
  }
}
