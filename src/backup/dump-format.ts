import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import type { ApiKey } from '../auth/key-store.js';
import type { ChatSettings } from '../chat/workspaces.js';
import type { SearchRule } from '../engine/search-rules/rules.js';
import type { Network } from '../engine/network/network.js';
import type { Webhook } from '../webhooks/webhook-store.js';
import type { Doc } from '../engine/documents/primary-key.js';
import type { IndexSettings } from '../engine/settings/settings.js';
import type { BatchRecord } from '../tasks/batch.js';
import type { TaskRecord } from '../tasks/task.js';
import { BackupFileError } from './file-writer.js';
import { mayHoldBigIntegers, parseJson } from '../util/exact-json.js';

/**
 * The dump format: portable across versions and storage layouts, because it holds what the
 * API deals in (settings, documents, tasks, keys, and the node-wide webhooks, dynamic search
 * rules, chat workspaces and network), never storage keys. A gzip-compressed
 * stream of JSON lines, one record per line, in this order:
 *
 *   header      {kind:"header", format:"trine-dump", version, trineVersion, dumpUid, nodeId, createdAt, taskUid}
 *   features    {kind:"features", features:{name: bool}}
 *   key*        {kind:"key", key:{uid, name, description, actions, indexes, expiresAt, createdAt, updatedAt, seq}}
 *   webhook*    {kind:"webhook", uuid, webhook:{url, headers}}
 *   searchRule* {kind:"searchRule", rule:{uid, description, precedence, active, conditions, actions, lastUpdatedAt}}
 *   chat*       {kind:"chat", uid, settings:{source, orgId, projectId, apiVersion, deploymentId, baseUrl, apiKey, prompts}}
 *   network     {kind:"network", network:{self, remotes, shards, leader, version}}
 *   per index:  {kind:"index", uid, primaryKey, createdAt, updatedAt, settings}
 *               {kind:"document", index, document}*   (in the index's document order)
 *   payload*    {kind:"payload", taskUid, documents}  (documents of tasks not processed yet)
 *   task*       {kind:"task", task}                    (ascending uid, up to the dump's own task)
 *   batch*      {kind:"batch", batch}
 *   end         {kind:"end", records, nextTaskUid, nextBatchUid, sha256}
 *
 * Times are epoch milliseconds. `sha256` is the hex SHA-256 of every byte (uncompressed)
 * before the end line and `records` the number of lines before it: a dump without its end
 * line is truncated, one whose checksum differs is corrupted, and either is refused whole.
 */

export const DUMP_FORMAT = 'trine-dump';
export const DUMP_VERSION = 1;

export interface DumpHeader {
  kind: 'header';
  format: typeof DUMP_FORMAT;
  version: number;
  trineVersion: string;
  dumpUid: string;
  nodeId: string;
  createdAt: number;
  /** The dumpCreation task that wrote it (the last task in the dump). */
  taskUid: number;
}

export type DumpRecord =
  | DumpHeader
  | { kind: 'features'; features: Record<string, boolean> }
  | { kind: 'key'; key: ApiKey }
  | { kind: 'webhook'; uuid: string; webhook: Webhook }
  | { kind: 'searchRule'; rule: SearchRule }
  | { kind: 'chat'; uid: string; settings: ChatSettings }
  | { kind: 'network'; network: Network }
  | { kind: 'index'; uid: string; primaryKey: string | null; createdAt: number; updatedAt: number; settings: IndexSettings }
  | { kind: 'document'; index: string; document: Doc }
  | { kind: 'payload'; taskUid: number; documents: Doc[] }
  | { kind: 'task'; task: TaskRecord }
  | { kind: 'batch'; batch: BatchRecord }
  | DumpEnd;

export interface DumpEnd {
  kind: 'end';
  records: number;
  nextTaskUid: number;
  nextBatchUid: number;
  sha256: string;
}

const KINDS = new Set(['header', 'features', 'key', 'webhook', 'searchRule', 'chat', 'network', 'index', 'document', 'payload', 'task', 'batch', 'end']);

/** A dump's file name: the reference's `yyyymmdd-hhmmssSSS` of the batch's start, in UTC. */
export function dumpUidAt(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2024-01-02T03:04:05.678Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}${iso.slice(20, 23)}`;
}

function gzipProblem(path: string, e: Error & { code?: string }): BackupFileError {
  if (e.code === 'Z_BUF_ERROR' || /unexpected end of file/i.test(e.message)) {
    return new BackupFileError(`The dump ${path} is truncated: its compressed stream ends early.`);
  }
  if (/incorrect header check/i.test(e.message)) {
    return new BackupFileError(`${path} is not a Trine dump: it is not gzip-compressed.`);
  }
  return new BackupFileError(`The dump ${path} is corrupted: ${e.message}.`);
}

/**
 * The records of a dump, checked as they are read: the caller sees the end record only once
 * the checksum and count matched, so a caller that acts on records must be able to drop what
 * it did if this throws (the import writes into a scratch database).
 */
export async function* readDump(path: string): AsyncGenerator<DumpRecord> {
  const gunzip = createGunzip();
  const file = createReadStream(path);
  file.on('error', (e) => gunzip.destroy(e));
  file.pipe(gunzip);
  const hash = createHash('sha256');
  let pending: Buffer = Buffer.alloc(0);
  let line = 0;
  let end: DumpEnd | null = null;
  const parse = (bytes: Buffer): DumpRecord => {
    line++;
    if (end) throw new BackupFileError(`The dump ${path} is corrupted: line ${line} comes after its end record.`);
    let rec: DumpRecord;
    try {
      const text = bytes.toString('utf8');
      rec = JSON.parse(text) as DumpRecord;
      // Documents keep their big integers to the digit (see exact-json.ts); the other records hold none.
      if ((rec?.kind === 'document' || rec?.kind === 'payload') && mayHoldBigIntegers(text)) rec = parseJson(text) as DumpRecord;
    } catch {
      if (line === 1) throw new BackupFileError(`${path} is not a Trine dump: its first line is not JSON.`);
      throw new BackupFileError(`The dump ${path} is corrupted: line ${line} is not valid JSON.`);
    }
    if (typeof rec !== 'object' || rec === null || !KINDS.has((rec as { kind?: string }).kind ?? '')) {
      throw new BackupFileError(`The dump ${path} is corrupted: line ${line} is not a dump record.`);
    }
    if (line === 1) checkHeader(path, rec);
    else if (rec.kind === 'header') throw new BackupFileError(`The dump ${path} is corrupted: a second header at line ${line}.`);
    if (rec.kind === 'end') {
      if (rec.sha256 !== hash.digest('hex')) {
        throw new BackupFileError(`The dump ${path} is corrupted: its SHA-256 checksum does not match its content.`);
      }
      if (rec.records !== line - 1) {
        throw new BackupFileError(`The dump ${path} is corrupted: it holds ${line - 1} records, its end record says ${rec.records}.`);
      }
      end = rec;
    } else hash.update(bytes).update('\n');
    return rec;
  };
  try {
    for await (const chunk of gunzip) {
      pending = pending.length === 0 ? (chunk as Buffer) : Buffer.concat([pending, chunk as Buffer]);
      let at = 0;
      for (let nl = pending.indexOf(0x0a, at); nl >= 0; nl = pending.indexOf(0x0a, at)) {
        yield parse(pending.subarray(at, nl));
        at = nl + 1;
      }
      pending = pending.subarray(at);
    }
  } catch (e) {
    if (e instanceof BackupFileError) throw e;
    throw gzipProblem(path, e as Error & { code?: string });
  } finally {
    file.destroy();
  }
  if (pending.length > 0) yield parse(pending);
  if (line === 0) throw new BackupFileError(`The dump ${path} is empty.`);
  if (!end) throw new BackupFileError(`The dump ${path} is truncated: it has no end record after ${line} records.`);
}

function checkHeader(path: string, rec: DumpRecord): asserts rec is DumpHeader {
  if (rec.kind !== 'header' || rec.format !== DUMP_FORMAT) {
    throw new BackupFileError(`${path} is not a Trine dump: it does not start with a ${DUMP_FORMAT} header.`);
  }
  if (rec.version !== DUMP_VERSION) {
    throw new BackupFileError(
      `The dump ${path} has format version ${rec.version} (written by Trine ${rec.trineVersion}); this build reads version ${DUMP_VERSION}.`,
    );
  }
}

/** Reads a whole dump without acting on it: the import's first pass. */
export async function verifyDump(path: string): Promise<{ header: DumpHeader; end: DumpEnd; documents: number }> {
  let header: DumpHeader | null = null;
  let end: DumpEnd | null = null;
  let documents = 0;
  for await (const rec of readDump(path)) {
    if (rec.kind === 'header') header = rec;
    else if (rec.kind === 'document') documents++;
    else if (rec.kind === 'end') end = rec;
  }
  return { header: header!, end: end!, documents };
}
