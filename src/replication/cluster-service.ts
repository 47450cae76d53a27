import * as grpc from '@grpc/grpc-js';
import {
  ClusterServiceService,
  type ClusterServiceServer,
  type JoinRequest,
  type JoinResponse,
  type LeaveRequest,
  type LeaveResponse,
  type ProposeRequest,
  type ProposeResponse,
  type StatusResponse,
  type TransferLeadershipRequest,
  type TransferLeadershipResponse,
  type WaitAppliedRequest,
  type WaitAppliedResponse,
} from '../gen/trine/v1/cluster.js';
import { ApiError } from '../errors/api-error.js';
import { ProposalError } from '../raft/core/index.js';
import { encodeResult, ProposalTimeout, Superseded } from './proposals.js';
import type { RaftReplicator } from './raft-replicator.js';
import { countedHandlers } from '../raft/transport/grpc-transport.js';

function fail(code: grpc.status, message: string): grpc.ServiceError {
  const e = new Error(message) as grpc.ServiceError;
  e.code = code;
  e.details = message;
  e.metadata = new grpc.Metadata();
  return e;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Serves forwarded writes, applied-index waits, membership changes, leadership transfers and
 * status to other nodes. The status codes of Propose tell the forwarding follower whether a
 * retry is safe: FAILED_PRECONDITION and ABORTED mean "not appended", DEADLINE_EXCEEDED means
 * "appended, fate unknown".
 */
export function registerClusterService(r: RaftReplicator, httpAddr: string): void {
  const t = r.transport;
  if (!t) return;
  const notLeader = () => `not the leader (leader: ${r.leaderId() ?? 'unknown'})`;
  const handlers: ClusterServiceServer = {
    propose: (call: grpc.ServerUnaryCall<ProposeRequest, ProposeResponse>, cb: grpc.sendUnaryData<ProposeResponse>) => {
      const denied = t.authorize(call, 'Propose');
      if (denied) return cb(denied);
      if (!r.isLeader()) return cb(fail(grpc.status.FAILED_PRECONDITION, notLeader()));
      let pending;
      try {
        pending = r.proposeLocal(call.request.command, Math.min(call.request.timeoutMs || r.writeTimeoutMs, 120_000));
      } catch (e) {
        // The core refused to append (not leader any more, transfer in progress, too much in flight).
        return cb(fail(grpc.status.FAILED_PRECONDITION, message(e)));
      }
      pending
        .then(({ index, result }) => cb(null, { ...encodeResult(result), index }))
        .catch((e: unknown) => {
          if (e instanceof ApiError) return cb(null, { resultJson: '', errorJson: JSON.stringify(e.toJSON()), index: 0 });
          if (e instanceof Superseded) return cb(fail(grpc.status.ABORTED, 'overwritten by a newer leader before it committed'));
          if (e instanceof ProposalTimeout) return cb(fail(grpc.status.DEADLINE_EXCEEDED, message(e)));
          cb(fail(grpc.status.UNKNOWN, message(e)));
        });
    },
    waitApplied: (call: grpc.ServerUnaryCall<WaitAppliedRequest, WaitAppliedResponse>, cb: grpc.sendUnaryData<WaitAppliedResponse>) => {
      const denied = t.authorize(call, 'WaitApplied');
      if (denied) return cb(denied);
      r.waitApplied(call.request.index, Math.min(call.request.timeoutMs || 5000, 60_000)).then((reached) =>
        cb(null, { appliedIndex: r.appliedIndex, reached }),
      );
    },
    join: (call: grpc.ServerUnaryCall<JoinRequest, JoinResponse>, cb: grpc.sendUnaryData<JoinResponse>) => {
      const denied = t.authorize(call, 'Join');
      if (denied) return cb(denied);
      const { nodeId, raftAddr, rejoin } = call.request;
      if (!/^[A-Za-z0-9_-]+$/.test(nodeId) || !/^.+:\d+$/.test(raftAddr)) {
        return cb(null, { accepted: false, leaderId: r.leaderId() ?? '', message: 'a node id and a host:port Raft address are required', members: [] });
      }
      // Any member may be asked: a follower passes the request on to the leader.
      r.membership
        .addNode(nodeId, raftAddr, rejoin)
        .then(() =>
          cb(null, {
            accepted: true,
            leaderId: r.leaderId() ?? '',
            message: 'added as a learner; promoted to voter once caught up',
            members: r.membership.members().map((p) => ({ id: p.id, raftAddr: p.addr, httpAddr: '', matchIndex: 0, voter: true, reachable: true })),
          }),
        )
        .catch((e: unknown) => cb(null, { accepted: false, leaderId: r.leaderId() ?? '', message: message(e), members: [] }));
    },
    leave: (call: grpc.ServerUnaryCall<LeaveRequest, LeaveResponse>, cb: grpc.sendUnaryData<LeaveResponse>) => {
      const denied = t.authorize(call, 'Leave');
      if (denied) return cb(denied);
      if (!r.isLeader()) return cb(null, { accepted: false, message: notLeader() });
      r.membership
        .removeNodeAsLeader(call.request.nodeId)
        .then(() => cb(null, { accepted: true, message: 'removed' }))
        .catch((e: unknown) => cb(null, { accepted: false, message: message(e) }));
    },
    transferLeadership: (
      call: grpc.ServerUnaryCall<TransferLeadershipRequest, TransferLeadershipResponse>,
      cb: grpc.sendUnaryData<TransferLeadershipResponse>,
    ) => {
      const denied = t.authorize(call, 'TransferLeadership');
      if (denied) return cb(denied);
      if (!r.isLeader()) return cb(null, { accepted: false, leaderId: r.leaderId() ?? '', message: notLeader() });
      r.membership
        .transferAsLeader(call.request.to || null, Math.min(call.request.timeoutMs || 5000, 30_000))
        .then((lead) => cb(null, { accepted: true, leaderId: lead, message: 'leadership moved' }))
        .catch((e: unknown) => {
          const msg = e instanceof ProposalError || e instanceof ApiError ? e.message : message(e);
          cb(null, { accepted: false, leaderId: r.leaderId() ?? '', message: msg });
        });
    },
    processed: (call, cb) => {
      const denied = t.authorize(call, 'Processed');
      if (denied) return cb(denied);
      if (r.isLeader()) r.processing?.received(call.request.nodeId, call.request.nextBatchUid);
      cb(null, {});
    },
    status: (call, cb: grpc.sendUnaryData<StatusResponse>) => {
      const denied = t.authorize(call, 'Status');
      if (denied) return cb(denied);
      cb(null, { ...r.membership.selfStatus(), httpAddr });
    },
  };
  t.server.addService(ClusterServiceService, countedHandlers(handlers, t.onServed));
}
