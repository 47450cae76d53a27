// The end of a simulation: with the network healed and every member up, one
// leader must commit a fresh entry that every member applies, within a
// bounded number of ticks, and all members must then agree on everything.

import { ProposalError } from '../../../src/raft/core/index.js';
import { SafetyViolation } from './checker.js';
import type { SimNode } from './sim-node.js';
import { TICK_MS, type Simulation } from './simulator.js';

export function converge(sim: Simulation, maxTicks: number): void {
  const start = sim.now;
  const deadline = start + maxTicks * TICK_MS;
  let barrier: string | undefined;
  while (sim.now < deadline) {
    sim.runUntil(sim.now + 2 * TICK_MS);
    const leader = sim.leader();
    if (!leader) continue;
    const st = leader.rn!.status();
    if (barrier === undefined || !leader.values.includes(barrier)) {
      // Propose a barrier, again now and then in case a leader change lost it.
      if (barrier === undefined || sim.rand() < 0.1) {
        try {
          const value = `barrier-${sim.nextValue++}`;
          leader.rn!.propose(new TextEncoder().encode(value));
          barrier = value;
          sim.touched(leader);
        } catch (e) {
          if (!(e instanceof ProposalError)) throw e;
        }
      }
      continue;
    }
    const members = [...st.confState.voters, ...st.confState.learners].map((id) => sim.nodes.get(id)!);
    if (leader.storage.lastIndex() !== st.lastIndex) continue;
    const lastTerm = leader.storage.term(st.lastIndex);
    const inStep = members.every((n) => {
      if (!n.up) return false;
      const s = n.rn!.status();
      return (
        s.lead === leader.id &&
        s.applied === st.commit &&
        s.lastIndex === st.lastIndex &&
        n.storage.lastIndex() === st.lastIndex &&
        n.storage.term(st.lastIndex) === lastTerm &&
        n.hash === leader.hash
      );
    });
    if (!inStep) continue;
    const leaders = [...sim.nodes.values()].filter((n) => n.up && n.rn!.status().role === 'leader');
    if (leaders.length !== 1) continue;
    sim.stats.convergedAfterTicks = Math.round((sim.now - start) / TICK_MS);
    finalChecks(sim, leader, members);
    return;
  }
  throw new SafetyViolation(`no convergence within ${maxTicks} ticks after healing: ${sim.describeCluster()}`);
}

function finalChecks(sim: Simulation, leader: SimNode, members: SimNode[]): void {
  const checker = sim.checker;
  const ref = leader.values.join(',');
  const conf = JSON.stringify(leader.rn!.confState());
  for (const n of members) {
    if (n.values.join(',') !== ref) checker.fail(`${n.id} applied a different sequence than ${leader.id}`);
    const cs = JSON.stringify(n.rn!.confState());
    if (cs !== conf) checker.fail(`${n.id} has configuration ${cs}, the leader ${conf}`);
  }
  const have = new Set(leader.values);
  for (const v of checker.acked) {
    if (!have.has(v)) checker.fail(`acknowledged value ${v} was lost`);
  }
  if (have.size !== leader.values.length) checker.fail('a value was applied twice');
  sim.stats.acked = checker.acked.size;
}
