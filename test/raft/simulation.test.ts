// Seeded deterministic simulation of whole clusters under faults; see sim/.
// Runs SEEDS seeds (default 300) starting at SEED_BASE (default 1), or only
// RAFT_SEED. A failure prints the command that replays it, and the tail of a
// traced replay (RAFT_TRACE=1 prints the whole trace of a replayed seed).

import { afterAll, describe, expect, it } from 'vitest';
import { Simulation, type SimStats } from './sim/simulator.js';

const single = process.env.RAFT_SEED;
const count = Number(process.env.SEEDS ?? 300);
const base = Number(process.env.SEED_BASE ?? 1);
const seeds = single !== undefined ? [Number(single)] : Array.from({ length: count }, (_, i) => base + i);

const totals: SimStats[] = [];

function runSeed(seed: number): SimStats {
  try {
    const stats = new Simulation({ seed }).run();
    if (process.env.RAFT_TRACE) {
      const traced = new Simulation({ seed, trace: true });
      traced.run();
      console.log(traced.traceLines.join('\n'));
    }
    return stats;
  } catch (err) {
    // Same seed, same run: replay it with tracing on to show what led there.
    const traced = new Simulation({ seed, trace: true });
    try {
      traced.run();
    } catch {
      // Expected: it fails the same way.
    }
    const tail = process.env.RAFT_TRACE ? traced.traceLines : traced.traceLines.slice(-150);
    const message = err instanceof Error ? err.stack ?? err.message : String(err);
    const replay = `RAFT_SEED=${seed} npx vitest run test/raft/simulation.test.ts`;
    throw new Error(
      `seed ${seed} failed; replay with: ${replay}\n${message}\n\n` +
        `last events (RAFT_TRACE=1 ${replay} prints them all):\n${tail.join('\n')}`,
    );
  }
}

describe('raft simulation', () => {
  for (const seed of seeds) {
    it(`seed ${seed}`, () => {
      const stats = runSeed(seed);
      if (process.env.RAFT_STATS) console.log(`seed ${seed}`, JSON.stringify(stats));
      totals.push(stats);
    });
  }

  afterAll(() => {
    if (single !== undefined || totals.length < 20) return;
    // The runs must actually have exercised the hard paths, not just idled.
    const sum = (k: keyof SimStats) => totals.reduce((s, t) => s + t[k], 0);
    expect(sum('crashes')).toBeGreaterThan(totals.length);
    expect(sum('snapshotsSent')).toBeGreaterThan(totals.length / 2);
    expect(sum('confChanges')).toBeGreaterThan(totals.length);
    expect(sum('acked')).toBeGreaterThan(totals.length * 20);
    expect(sum('readsServed')).toBeGreaterThan(totals.length * 20);
    expect(sum('leaseReadsServed')).toBeGreaterThan(totals.length * 5);
    expect(Math.max(...totals.map((t) => t.maxTerm))).toBeGreaterThan(5);
  });
});
