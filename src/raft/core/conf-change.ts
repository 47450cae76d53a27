// Single-server membership changes: their wire encoding inside a log entry,
// validation, and their effect on a ConfState.
//
// When a change takes effect: when its entry is applied (as etcd does). The
// core applies it itself in RawNode.advance(), for the confChange entries of
// the Ready being acknowledged. Why this is safe with one change at a time:
// - a leader accepts a new change only once every earlier one is applied on
//   it (pendingConfIndex, set to the last index on election, so a new leader
//   first commits an entry of its own term: the fix to the original
//   single-server algorithm);
// - so any node holding change k+1 in its log also learned that change k was
//   committed (the append that carried k+1 also carried commit >= k), and a
//   node refuses to campaign while it has committed but unapplied changes;
// - hence configurations in use at any moment differ by at most one server,
//   and any majority of one intersects any majority of the other.

import type { ConfChange, ConfChangeType, ConfState } from './types.js';

const VERSION = 1;
const TYPES: ConfChangeType[] = ['addVoter', 'addLearner', 'removeNode'];
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Layout: version u8, type u8, id length u16 (big-endian), id UTF-8, then context. */
export function encodeConfChange(cc: ConfChange): Uint8Array {
  const id = encoder.encode(cc.nodeId);
  if (id.length > 0xffff) throw new Error('conf change node id too long');
  const ctx = cc.context ?? new Uint8Array(0);
  const out = new Uint8Array(4 + id.length + ctx.length);
  out[0] = VERSION;
  out[1] = TYPES.indexOf(cc.type);
  out[2] = id.length >> 8;
  out[3] = id.length & 0xff;
  out.set(id, 4);
  out.set(ctx, 4 + id.length);
  return out;
}

export function decodeConfChange(data: Uint8Array): ConfChange {
  if (data.length < 4 || data[0] !== VERSION) throw new Error('not an encoded conf change');
  const type = TYPES[data[1]!];
  if (type === undefined) throw new Error(`unknown conf change type ${data[1]}`);
  const idLen = (data[2]! << 8) | data[3]!;
  if (4 + idLen > data.length) throw new Error('truncated conf change');
  const nodeId = decoder.decode(data.subarray(4, 4 + idLen));
  const context = data.slice(4 + idLen);
  return context.length > 0 ? { type, nodeId, context } : { type, nodeId };
}

/** Why `cc` cannot apply to `cs`, or undefined when it can. */
export function validateConfChange(cs: ConfState, cc: ConfChange): string | undefined {
  if (cc.nodeId === '') return 'conf change without a node id';
  const isVoter = cs.voters.includes(cc.nodeId);
  const isLearner = cs.learners.includes(cc.nodeId);
  switch (cc.type) {
    case 'addVoter':
      return isVoter ? `${cc.nodeId} is already a voter` : undefined;
    case 'addLearner':
      if (isLearner) return `${cc.nodeId} is already a learner`;
      if (isVoter && cs.voters.length === 1) return `cannot demote ${cc.nodeId}, the last voter`;
      return undefined;
    case 'removeNode':
      if (!isVoter && !isLearner) return `${cc.nodeId} is not a member`;
      if (isVoter && cs.voters.length === 1) return `cannot remove ${cc.nodeId}, the last voter`;
      return undefined;
  }
}

/**
 * The configuration after `cc`. An invalid change leaves the configuration
 * unchanged: every node applies the same entries, so they all ignore it alike.
 */
export function applyConfChange(cs: ConfState, cc: ConfChange): ConfState {
  if (validateConfChange(cs, cc) !== undefined) return { voters: [...cs.voters], learners: [...cs.learners] };
  const voters = cs.voters.filter((id) => id !== cc.nodeId);
  const learners = cs.learners.filter((id) => id !== cc.nodeId);
  if (cc.type === 'addVoter') voters.push(cc.nodeId);
  if (cc.type === 'addLearner') learners.push(cc.nodeId);
  return { voters: voters.sort(), learners: learners.sort() };
}

export function confStateEqual(a: ConfState, b: ConfState): boolean {
  const norm = (xs: string[]) => [...xs].sort().join('\u0000');
  return norm(a.voters) === norm(b.voters) && norm(a.learners) === norm(b.learners);
}
