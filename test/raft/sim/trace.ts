// One-line descriptions of messages and Readies for simulation traces.

import type { Message, NodeId, RawNode, Ready } from '../../../src/raft/core/index.js';
import type { ReadyView, SimNode } from './sim-node.js';

export function describe(m: Message): string {
  const base = `${m.type} ${m.from}->${m.to} t${m.term}`;
  switch (m.type) {
    case 'app':
      return `${base} prev=${m.prevIndex}/${m.prevTerm} n=${m.entries.length} commit=${m.commit}`;
    case 'appResp':
      return `${base} index=${m.index}${m.reject ? ` reject hint=${m.rejectHint}/${m.hintTerm}` : ''}`;
    case 'vote':
    case 'preVote':
      return `${base} last=${m.lastIndex}/${m.lastTerm}`;
    case 'voteResp':
    case 'preVoteResp':
      return `${base}${m.reject ? ' reject' : ' grant'}`;
    case 'heartbeat':
      return `${base} commit=${m.commit}`;
    case 'snapshot':
      return `${base} at ${m.snapshot.meta.index}/${m.snapshot.meta.term}`;
    default:
      return base;
  }
}

export function readyView(rn: RawNode): ReadyView {
  const st = rn.status();
  return { role: st.role, term: st.term };
}

export function describeReady(id: NodeId, rd: Ready): string {
  const parts = [`${id} ready`];
  if (rd.softState) parts.push(`soft=${rd.softState.role}/${rd.softState.lead}`);
  if (rd.hardState) parts.push(`hard=t${rd.hardState.term} v=${rd.hardState.vote} c=${rd.hardState.commit}`);
  if (rd.snapshot) parts.push(`snap=${rd.snapshot.meta.index}`);
  if (rd.entries.length) parts.push(`ents=${rd.entries[0]!.index}..${rd.entries[rd.entries.length - 1]!.index}`);
  if (rd.committedEntries.length) parts.push(`apply=${rd.committedEntries[0]!.index}..${rd.committedEntries[rd.committedEntries.length - 1]!.index}`);
  if (rd.messages.length) parts.push(`msgs=${rd.messages.length}`);
  return parts.join(' ');
}

export function describeCluster(nodes: Iterable<SimNode>): string {
  const parts: string[] = [];
  for (const n of nodes) {
    if (!n.up) {
      parts.push(`${n.id}:${n.decommissioned ? 'gone' : 'down'}`);
      continue;
    }
    const s = n.rn!.status();
    parts.push(`${n.id}:${s.role}@${s.term} lead=${s.lead} commit=${s.commit} applied=${s.applied} last=${s.lastIndex} conf=${s.confState.voters.join('+')}/${s.confState.learners.join('+')}`);
  }
  return parts.join('; ');
}
