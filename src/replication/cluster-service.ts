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
  type WaitAppliedRequest,
  type WaitAppliedResponse,
} from '../gen/trine/v1/cluster.js';
import { ApiError } from '../errors/api-error.js';
import { encodeResult, type RaftReplicator } from './raft-replicator.js';

function fail(code: grpc.status, message: string): grpc.ServiceError {
  const e = new Error(message) as grpc.ServiceError;
  e.code = code;
  e.details = message;
  e.metadata = new grpc.Metadata();
  return e;
}

/** Serves forwarded writes, applied-index waits, membership changes and status to other nodes. */
export function registerClusterService(r: RaftReplicator, httpAddr: string): void {
  const t = r.transport;
  if (!t) return;
  const handlers: ClusterServiceServer = {
    propose: (call: grpc.ServerUnaryCall<ProposeRequest, ProposeResponse>, cb: grpc.sendUnaryData<ProposeResponse>) => {
      const denied = t.authorize(call, 'Propose');
      if (denied) return cb(denied);
      if (!r.isLeader()) return cb(fail(grpc.status.FAILED_PRECONDITION, `not the leader (leader: ${r.leaderId() ?? 'unknown'})`));
      r.proposeLocal(call.request.command)
        .then(({ index, result }) => cb(null, { ...encodeResult(result), index }))
        .catch((e: unknown) => {
          if (e instanceof ApiError) return cb(null, { resultJson: '', errorJson: JSON.stringify(e.toJSON()), index: 0 });
          cb(fail(grpc.status.UNAVAILABLE, e instanceof Error ? e.message : String(e)));
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
      if (!r.isLeader()) return cb(null, { accepted: false, leaderId: r.leaderId() ?? '', message: 'not the leader' });
      r.addNode(call.request.nodeId, call.request.raftAddr)
        .then(() => cb(null, { accepted: true, leaderId: r.nodeId, message: 'added as a learner; promoted once caught up' }))
        .catch((e: unknown) => cb(null, { accepted: false, leaderId: r.leaderId() ?? '', message: String(e) }));
    },
    leave: (call: grpc.ServerUnaryCall<LeaveRequest, LeaveResponse>, cb: grpc.sendUnaryData<LeaveResponse>) => {
      const denied = t.authorize(call, 'Leave');
      if (denied) return cb(denied);
      if (!r.isLeader()) return cb(null, { accepted: false, message: `not the leader (leader: ${r.leaderId() ?? 'unknown'})` });
      r.removeNode(call.request.nodeId)
        .then(() => cb(null, { accepted: true, message: 'removed' }))
        .catch((e: unknown) => cb(null, { accepted: false, message: String(e) }));
    },
    status: (call, cb: grpc.sendUnaryData<StatusResponse>) => {
      const denied = t.authorize(call, 'Status');
      if (denied) return cb(denied);
      const st = r.status();
      cb(null, {
        id: st.self.id,
        role: st.self.role,
        term: st.self.term,
        leaderId: st.self.leader ?? '',
        commitIndex: st.self.commitIndex,
        appliedIndex: st.self.appliedIndex,
        peers: [],
        httpAddr,
      });
    },
  };
  t.server.addService(ClusterServiceService, handlers);
}
