// Follower read leases (lease.ts): a follower holding one serves reads from its own
// log, so nothing may commit that its log lacks while the lease can last, on this
// leader or the next.

import { describe, expect, it } from 'vitest';
import { TestCluster } from './helpers.js';

const LEASE = 100;

/** A cluster on one manual clock; n1 leads and both followers hold leases. `lengths`: a node's own lease length. */
function leased(ids = ['n1', 'n2', 'n3'], followerLeaseMs = LEASE, lengths: Record<string, number> = {}) {
  const clock = { now: 1_000 };
  const c = new TestCluster(ids, { followerLeaseMs, clock: () => clock.now }, 1, (id) => (id in lengths ? { followerLeaseMs: lengths[id]! } : {}));
  c.campaign('n1');
  // The new leader treats every voter as leased for a while: let that pass, then a
  // heartbeat for the followers' tagged replies and one that grants on them.
  clock.now += LEASE * 2;
  c.tick('n1', 2);
  return { c, clock };
}

/**
 * Proposes `data` on `lead` and checks that it does not commit until the leader's clock is past
 * `from` plus its view of a lease, and does once it is.
 */
function expectHeldUntilLeaseEnds(c: TestCluster, clock: { now: number }, lead: string, data: string, from: number): void {
  const { index } = c.propose(lead, data);
  expect(c.node(lead).rn.committed()).toBeLessThan(index);
  clock.now = from + LEASE * 1.25 + 1;
  c.tick(lead);
  expect(c.node(lead).rn.committed()).toBeGreaterThanOrEqual(index);
}

describe('follower read leases', () => {
  it('lets a caught-up follower read from its own log, and not once the lease ran out', () => {
    const { c, clock } = leased();
    const { index } = c.propose('n1', 'a');
    c.tick('n1');
    expect(c.node('n3').rn.leaseRead()).toEqual({ index, term: c.node('n1').status().term });
    clock.now += LEASE - 1;
    expect(c.node('n3').rn.leaseRead()).not.toBeNull();
    clock.now += 1;
    expect(c.node('n3').rn.leaseRead()).toBeNull();
    // The leader is no follower: its reads keep the read index.
    expect(c.node('n1').rn.leaseRead()).toBeNull();
  });

  it('grants nothing when leases are off, in a cluster of five, or to a follower behind the leader', () => {
    const off = leased(['n1', 'n2', 'n3'], 0).c;
    expect(off.node('n2').rn.leaseRead()).toBeNull();
    const five = leased(['n1', 'n2', 'n3', 'n4', 'n5']).c;
    for (const id of ['n2', 'n3', 'n4', 'n5']) expect(five.node(id).rn.leaseRead()).toBeNull();

    const clock = { now: 1_000 };
    const c = new TestCluster(['n1', 'n2', 'n3'], { followerLeaseMs: LEASE, clock: () => clock.now });
    c.campaign('n1');
    clock.now += LEASE * 2;
    c.drop((m) => m.type === 'app' && m.to === 'n3');
    c.propose('n1', 'a');
    c.tick('n1', 3);
    expect(c.node('n3').rn.leaseRead()).toBeNull();
    expect(c.node('n2').rn.leaseRead()).not.toBeNull();
  });

  it('holds the commit index at what a leased follower holds until its lease ends on the leader’s clock', () => {
    const { c, clock } = leased();
    const granted = clock.now;
    c.drop((m) => m.to === 'n3' || m.from === 'n3');
    const { index } = c.propose('n1', 'a');
    // n2 holds the entry too: a majority, but n3 may still read from its log without it.
    expect(c.node('n2').status().lastIndex).toBeGreaterThanOrEqual(index);
    expect(c.node('n1').rn.committed()).toBeLessThan(index);
    clock.now = granted + LEASE * 1.25 - 1;
    c.tick('n1');
    expect(c.node('n1').rn.committed()).toBeLessThan(index);
    // n3's own view ended first.
    expect(c.node('n3').rn.leaseRead()).toBeNull();
    clock.now = granted + LEASE * 1.25 + 1;
    c.tick('n1');
    expect(c.node('n1').rn.committed()).toBeGreaterThanOrEqual(index);
    expect(c.node('n2').applied).toContain('a');
  });

  it('makes a new leader wait for the leases its predecessor may have granted, even with shorter leases of its own, or none', () => {
    for (const own of [LEASE, LEASE / 4, 0]) {
      const { c, clock } = leased(['n1', 'n2', 'n3'], LEASE, { n2: own });
      // n3 still holds its lease from n1 and hears nothing more; n1 hands over to n2.
      c.drop((m) => m.to === 'n3' || m.from === 'n3');
      c.node('n1').rn.transferLeadership('n2');
      c.stabilize();
      expect(c.leader()).toBe('n2');
      expect(c.node('n3').rn.leaseRead()).not.toBeNull();
      expectHeldUntilLeaseEnds(c, clock, 'n2', 'b', clock.now);
    }
  });

  it('holds a follower configured with a longer lease to the length its leader counts', () => {
    const { c, clock } = leased(['n1', 'n2', 'n3'], LEASE, { n3: LEASE * 10 });
    const { index } = c.propose('n1', 'a');
    c.tick('n1');
    const granted = c.delivered.filter((m) => m.type === 'heartbeat' && m.to === 'n3' && m.lease > 0).at(-1)!;
    expect(granted).toMatchObject({ leaseMs: LEASE });
    expect(c.node('n3').rn.leaseRead()).toMatchObject({ index });
    // n3's reply left before the grant: its lease ends within LEASE of now, not 10 x LEASE.
    clock.now += LEASE;
    expect(c.node('n3').rn.leaseRead()).toBeNull();
  });

  it('drops a lease when the follower’s term changes', () => {
    const { c } = leased();
    expect(c.node('n3').rn.leaseRead()).not.toBeNull();
    c.node('n1').rn.transferLeadership('n2');
    c.stabilize();
    expect(c.leader()).toBe('n2');
    expect(c.node('n3').rn.leaseRead()).toBeNull();
  });

  it('keeps the commit index for a removed member until its lease ends', () => {
    const { c, clock } = leased();
    c.node('n1').rn.proposeConfChange({ type: 'removeNode', nodeId: 'n3' });
    c.stabilize();
    expect(c.node('n1').rn.confState().voters).toEqual(['n1', 'n2']);
    c.drop((m) => m.to === 'n3' || m.from === 'n3');
    expectHeldUntilLeaseEnds(c, clock, 'n1', 'c', clock.now);
  });

  it('stops renewing a follower that declines leases, whose lease then runs out', () => {
    const { c, clock } = leased();
    c.node('n3').rn.wantLeases(false);
    c.tick('n1', 2);
    const lastGrant = clock.now;
    expect(c.delivered.filter((m) => m.type === 'heartbeatResp' && m.from === 'n3').at(-1)).toMatchObject({ seq: 0 });
    expect(c.delivered.filter((m) => m.type === 'heartbeat' && m.to === 'n3').at(-1)).toMatchObject({ lease: 0 });
    for (let i = 0; i < 5; i++) {
      clock.now += LEASE / 5;
      c.tick('n1');
    }
    expect(c.node('n3').rn.leaseRead()).toBeNull();
    expect(c.node('n2').rn.leaseRead()).not.toBeNull();
    // Once the leader's view of n3's lease ended, commits no longer wait for n3.
    clock.now = lastGrant + LEASE * 1.25 + 1;
    c.drop((m) => m.to === 'n3');
    const { index } = c.propose('n1', 'd');
    expect(c.node('n1').rn.committed()).toBeGreaterThanOrEqual(index);
    c.heal();
    c.node('n3').rn.wantLeases(true);
    c.tick('n1', 2);
    expect(c.node('n3').rn.leaseRead()).not.toBeNull();
  });

  it('ignores a grant naming a reply of an earlier incarnation', () => {
    const { c } = leased();
    const n3 = c.node('n3');
    const grant = c.delivered.filter((m) => m.type === 'heartbeat' && m.to === 'n3' && m.lease > 0).at(-1)!;
    n3.restart();
    expect(n3.rn.leaseRead()).toBeNull();
    n3.rn.step(grant);
    expect(n3.rn.leaseRead()).toBeNull();
  });
});
