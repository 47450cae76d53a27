import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Options } from '../config/options.js';
import type { SnapshotMeta } from '../raft/core/index.js';
import { RaftLogStore } from '../raft/log-store.js';
import { APPLIED_META } from '../replication/state-snapshot.js';
import { RocksStore } from '../store/rocks-store.js';
import type { KvStore } from '../store/kv.js';
import { importDump } from './dump-import.js';
import { verifyDump } from './dump-format.js';
import { BackupFileError } from './file-writer.js';
import { loadSnapshotFile, verifySnapshotFile } from './snapshot-file.js';
import { humanLine } from '../util/log-hub.js';
import { embedderEnvironmentOf } from '../config/embedder-environment.js';

export interface ImportLogger {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'];

/**
 * JSON log lines for the import, which runs before the HTTP server (and its logger) exists;
 * same fields as the server's lines (`level` as pino numbers it, `time`, `msg`).
 */
export function startupLogger(level: string, stream: { write(line: string): void } = process.stdout, mode: 'human' | 'json' = 'json'): ImportLogger {
  const min = level === 'off' ? Infinity : LEVELS.indexOf(level);
  const at = (name: 'info' | 'warn', num: number) => (obj: unknown, msg?: string) => {
    if (LEVELS.indexOf(name) < min) return;
    const line = { level: num, time: Date.now(), ...(obj as object), msg };
    stream.write(mode === 'json' ? JSON.stringify(line) + '\n' : humanLine(line, 'trine'));
  };
  return { info: at('info', 30), warn: at('warn', 40) };
}

/** A database exists once its directory holds anything (the reference's rule for data.ms). */
export function databaseExists(dbPath: string): boolean {
  return existsSync(dbPath) && readdirSync(dbPath).length > 0;
}

/**
 * Makes imported state the base of a new Raft log, as if this node had installed a snapshot
 * at `index`: its only voter is this node, so it elects itself at once; nodes that `--join`
 * it later find the log starting after `index` and receive the state as a Raft snapshot.
 * Nothing of the source's cluster (members, terms of its log) is kept.
 */
async function seedRaftState(store: KvStore, nodeId: string, index: number, term: number): Promise<void> {
  const meta: SnapshotMeta = { index, term, confState: { voters: [nodeId], learners: [] } };
  const wb = store.batch();
  wb.put(APPLIED_META, JSON.stringify(meta));
  RaftLogStore.stageInstalled(wb, meta, { term, vote: '', commit: index });
  await wb.commit({ sync: true });
}

/**
 * `--import-dump` / `--import-snapshot`, before the node opens its database. The file is
 * checked whole first (a damaged one is refused before anything is written), then imported
 * into a scratch database beside `--db-path` that is renamed into place only once complete:
 * a failure or a crash half-way leaves no database, never half of one.
 */
export async function importAtStart(options: Options, log: ImportLogger): Promise<void> {
  const which = options.importDump !== null ? 'dump' : options.importSnapshot !== null ? 'snapshot' : null;
  if (which === null) return;
  const file = (which === 'dump' ? options.importDump : options.importSnapshot)!;
  const ignoreMissing = which === 'dump' ? options.ignoreMissingDump : options.ignoreMissingSnapshot;
  const ignoreIfExists = which === 'dump' ? options.ignoreDumpIfDbExists : options.ignoreSnapshotIfDbExists;
  const dbPath = options.dbPath;

  if (databaseExists(dbPath)) {
    if (ignoreIfExists) {
      log.info({ file, dbPath }, `the database exists: --import-${which} is ignored`);
      return;
    }
    throw new BackupFileError(
      `The database ${dbPath} already exists and --import-${which} only starts a fresh node: nothing was imported. Remove ${dbPath} or choose another --db-path to import, or pass --ignore-${which}-if-db-exists to start with the existing database.`,
    );
  }
  if (!existsSync(file)) {
    if (ignoreMissing) {
      log.warn({ file }, `the ${which} file does not exist: starting without it (--ignore-missing-${which})`);
      return;
    }
    throw new BackupFileError(`The ${which} file ${file} does not exist. Pass --ignore-missing-${which} to start without it.`);
  }

  const scratch = `${resolve(dbPath)}.importing`;
  rmSync(scratch, { recursive: true, force: true });
  const started = Date.now();
  let store: RocksStore | null = null;
  try {
    if (which === 'dump') {
      const { documents } = await verifyDump(file);
      log.info({ file, documents }, 'dump checked: importing');
      store = await RocksStore.open(scratch);
      const summary = await importDump(file, store, embedderEnvironmentOf(options));
      await seedRaftState(store, options.nodeId, 1, 1);
      log.info({ file, ...summary, ms: Date.now() - started }, 'dump imported');
    } else {
      const verified = await verifySnapshotFile(file);
      log.info({ file, appliedIndex: verified.header.appliedIndex }, 'snapshot checked: importing');
      store = await RocksStore.open(scratch);
      const pos = await loadSnapshotFile(store, verified);
      await seedRaftState(store, options.nodeId, pos.index, pos.term);
      log.info({ file, ms: Date.now() - started }, 'snapshot imported');
    }
    await store.close();
    store = null;
  } catch (e) {
    await store?.close().catch(() => {});
    rmSync(scratch, { recursive: true, force: true });
    throw e;
  }
  // Only an empty directory can be there (checked above).
  rmSync(dbPath, { recursive: true, force: true });
  renameSync(scratch, dbPath);
}
