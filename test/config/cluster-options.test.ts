import { describe, expect, it } from 'vitest';
import { OptionsError, parseOptions } from '../../src/config/options.js';

const parse = (...argv: string[]) => parseOptions(argv, {});

describe('cluster flags', () => {
  it('defaults to a single node with a 10 s write timeout and snapshots every 10,000 entries', () => {
    const o = parse();
    expect(o).toMatchObject({ peers: [], join: null, raftTls: null, raftSnapshotThreshold: 10_000, writeTimeoutMs: 10_000 });
  });

  it('reads durations in ms, s or m, and a bare number as milliseconds', () => {
    expect(parse('--write-timeout', '500ms').writeTimeoutMs).toBe(500);
    expect(parse('--write-timeout', '2.5s').writeTimeoutMs).toBe(2500);
    expect(parse('--write-timeout', '1m').writeTimeoutMs).toBe(60_000);
    expect(parse('--write-timeout=750').writeTimeoutMs).toBe(750);
    expect(() => parse('--write-timeout', 'soon')).toThrow(/--write-timeout: expected a duration/);
    expect(() => parse('--write-timeout', '0')).toThrow(/at least 1 ms/);
  });

  it('takes the three TLS files together or not at all', () => {
    const o = parse('--raft-tls-cert', 'c.pem', '--raft-tls-key', 'k.pem', '--raft-tls-ca', 'ca.pem');
    expect(o.raftTls).toEqual({ cert: 'c.pem', key: 'k.pem', ca: 'ca.pem' });
    expect(() => parse('--raft-tls-cert', 'c.pem')).toThrow(OptionsError);
    expect(() => parse('--raft-tls-cert', 'c.pem', '--raft-tls-key', 'k.pem')).toThrow(/give all three or none/);
  });

  it('joins through a member only with its own Raft address and without --peers', () => {
    const o = parse('--node-id', 'n4', '--raft-addr', '127.0.0.1:7804', '--join', '127.0.0.1:7801');
    expect(o.join).toBe('127.0.0.1:7801');
    expect(() => parse('--join', '127.0.0.1:7801')).toThrow(/--join needs --raft-addr/);
    expect(() =>
      parse('--raft-addr', '127.0.0.1:7801', '--join', '127.0.0.1:7802', '--peers', 'n1=127.0.0.1:7801,n2=127.0.0.1:7802'),
    ).toThrow(/exclude each other/);
    expect(() => parse('--raft-addr', '127.0.0.1:7804', '--join', 'nowhere')).toThrow(/--join: expected host:port/);
  });

  it('gives followers a 600 ms read lease unless told another length, or 0 for none', () => {
    expect(parse().readLeaseMs).toBe(600);
    expect(parse('--read-lease', '1.5s').readLeaseMs).toBe(1500);
    expect(parse('--read-lease', '0').readLeaseMs).toBe(0);
    expect(parse('--read-lease', '0ms').readLeaseMs).toBe(0);
    expect(parseOptions([], { TRINE_READ_LEASE: '0' }).readLeaseMs).toBe(0);
    expect(() => parse('--read-lease', 'short')).toThrow(/--read-lease: expected a duration/);
  });

  it('wants a positive snapshot threshold', () => {
    expect(parse('--raft-snapshot-threshold', '20').raftSnapshotThreshold).toBe(20);
    expect(() => parse('--raft-snapshot-threshold', '0')).toThrow(/positive number of entries/);
    expect(() => parse('--raft-snapshot-threshold', 'many')).toThrow(/positive number of entries/);
  });

  it('reads every cluster flag from TRINE_* environment variables too', () => {
    const o = parseOptions([], {
      TRINE_NODE_ID: 'n2',
      TRINE_RAFT_ADDR: '127.0.0.1:7802',
      TRINE_PEERS: 'n1=127.0.0.1:7801,n2=127.0.0.1:7802',
      TRINE_WRITE_TIMEOUT: '3s',
      TRINE_RAFT_SNAPSHOT_THRESHOLD: '500',
    });
    expect(o).toMatchObject({ nodeId: 'n2', writeTimeoutMs: 3000, raftSnapshotThreshold: 500 });
    expect(o.peers.map((p) => p.id)).toEqual(['n1', 'n2']);
  });
});
