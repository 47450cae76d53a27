import { join as pathJoin } from 'node:path';
import { DEFAULT_HUB_ENDPOINT } from '../engine/vector/hub-model/hub-cache.js';
import { parseByteSize } from './byte-size.js';

export type Env = 'development' | 'production';
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

export interface PeerSpec {
  id: string;
  addr: string;
}

export interface Options {
  dbPath: string;
  httpAddr: { host: string; port: number };
  masterKey: string | null;
  env: Env;
  httpPayloadSizeLimit: number;
  /** Largest JSON body of every route but document uploads and deletions by id. */
  httpJsonPayloadSizeLimit: number;
  logLevel: LogLevel;
  nodeId: string;
  raftAddr: { host: string; port: number } | null;
  peers: PeerSpec[];
  clusterSecret: string | null;
  /** Raft address of a running member to join through (a new node that is not in --peers). */
  join: string | null;
  /** PEM files for node-to-node TLS (all three or none). */
  raftTls: { cert: string; key: string; ca: string } | null;
  /** HTTPS for the API (`--ssl-*`); null: plain HTTP. */
  ssl: SslOptions | null;
  /** How log lines are written to standard output. */
  logsMode: 'human' | 'json';
  /** Applied entries between two snapshots of the Raft log. */
  raftSnapshotThreshold: number;
  /** How long a write may wait for a leader and a quorum before failing with `no_leader`. */
  writeTimeoutMs: number;
  /** `consistent`: a read reflects every write the cluster reported done; `stale`: a node answers from what it holds. */
  readConsistency: 'consistent' | 'stale';
  /** How long a consistent read may wait before failing with `consistent_read_timeout`. */
  readTimeoutMs: number;
  /** A follower's read lease (0: none): while it holds one, its consistent reads skip the leader. */
  readLeaseMs: number;
  /** The balancer's health check fails beyond this many log entries behind the leader... */
  healthMaxLagEntries: number;
  /** ...or this many milliseconds behind it. */
  healthMaxLagMs: number;
  /** Tasks kept before a deletion of the oldest finished tenth is enqueued. */
  taskQueueLimit: number;
  dumpDir: string;
  snapshotDir: string;
  /** A dump to start from (see `src/backup/`); only on a fresh single node that may then seed a cluster. */
  importDump: string | null;
  ignoreMissingDump: boolean;
  ignoreDumpIfDbExists: boolean;
  importSnapshot: string | null;
  ignoreMissingSnapshot: boolean;
  ignoreSnapshotIfDbExists: boolean;
  /** Seconds between two scheduled snapshots; null when none are scheduled. */
  scheduleSnapshot: number | null;
  /** A webhook of this node's own (not editable through the API), notified after every batch. */
  taskWebhook: { url: string; authorization: string | null } | null;
  /** How long one webhook notification attempt may take. */
  webhookTimeoutMs: number;
  /** Cache of models fetched from the model hub for `hubModel` embedders. */
  hubModelsDir: string;
  /** The model hub's address (or an offline mirror's). */
  hubEndpoint: string;
  /** Token sent to the hub for gated or private models (`HF_TOKEN`). */
  hubToken: string | null;
  /** REST embedders: one request's timeout, attempts per chunk, longest wait between two. */
  embedderTimeoutMs: number;
  embedderAttempts: number;
  embedderMaxRetryDelayMs: number;
}

export class OptionsError extends Error {}

interface FlagDef {
  name: string;
  help: string;
  /** Flags without a value (booleans). */
  bare?: boolean;
  /** The value of a flag whose value may be left out (`--schedule-snapshot` alone). */
  optional?: string;
  default?: string;
}

export interface SslOptions {
  certPath: string;
  keyPath: string;
  /** CA for client certificates. */
  authPath: string | null;
  requireAuth: boolean;
  resumption: boolean;
  tickets: boolean;
}

/** Every flag; the README's table is written from this list. */
export const FLAGS: FlagDef[] = [
  { name: 'db-path', help: 'Directory of the node\'s database', default: './data' },
  { name: 'http-addr', help: 'Address the HTTP API listens on (host:port)', default: '127.0.0.1:7700' },
  { name: 'master-key', help: 'Master key protecting the API (at least 16 bytes in production)' },
  { name: 'env', help: 'development or production (production requires a master key)', default: 'development' },
  { name: 'http-payload-size-limit', help: 'Largest accepted request body, e.g. "100 MB"', default: '100 MB' },
  { name: 'http-json-payload-size-limit', help: 'Largest JSON body of the routes that are not document uploads (search, settings, ...), at most the payload limit', default: '2 MiB' },
  { name: 'log-level', help: 'off, error, warn, info, debug or trace', default: 'info' },
  { name: 'experimental-logs-mode', help: 'human (readable lines) or json (one JSON object a line); default human in development, json in production' },
  { name: 'ssl-cert-path', help: 'PEM certificate (chain) to serve the API over HTTPS (with --ssl-key-path)' },
  { name: 'ssl-key-path', help: 'PEM private key of --ssl-cert-path' },
  { name: 'ssl-auth-path', help: 'PEM CA bundle: clients presenting a certificate must present one it signed' },
  { name: 'ssl-require-auth', help: 'Refuse clients without a certificate signed by --ssl-auth-path', bare: true },
  { name: 'ssl-resumption', help: 'Let clients resume TLS sessions (session ids)', bare: true },
  { name: 'ssl-tickets', help: 'Let clients resume TLS sessions with session tickets', bare: true },
  { name: 'node-id', help: 'Stable id of this node in a cluster', default: 'n1' },
  { name: 'raft-addr', help: 'Address for node-to-node gRPC traffic (host:port); cluster mode only' },
  { name: 'peers', help: 'Cluster members as id=host:port,id=host:port (this node included); none = single node' },
  { name: 'cluster-secret', help: 'Shared secret every node-to-node call must carry' },
  { name: 'join', help: 'Raft address (host:port) of a running member: join that cluster as a new node' },
  { name: 'raft-tls-cert', help: 'PEM certificate of this node for node-to-node TLS' },
  { name: 'raft-tls-key', help: 'PEM private key of --raft-tls-cert' },
  { name: 'raft-tls-ca', help: 'PEM CA bundle that signed every node\'s certificate' },
  { name: 'raft-snapshot-threshold', help: 'Applied log entries between two snapshots (the log is compacted behind them)', default: '10000' },
  { name: 'write-timeout', help: 'How long a write waits for a leader and a quorum before failing with no_leader, e.g. "10s"', default: '10s' },
  {
    name: 'read-consistency',
    help: 'consistent: every read reflects every write and task the cluster reported done (it may wait up to --read-timeout); stale: a node answers at once from what it holds',
    default: 'consistent',
  },
  { name: 'read-timeout', help: 'How long a consistent read waits before failing with consistent_read_timeout, e.g. "5s"', default: '5s' },
  {
    name: 'read-lease',
    help: 'A follower read lease: while the leader renews it, a follower answers consistent reads from its own log without asking the leader; "0" turns leases off. The same on every node',
    default: '600ms',
  },
  { name: 'health-max-lag-entries', help: 'GET /cluster/health fails while the node is more log entries than this behind the leader', default: '1000' },
  { name: 'health-max-lag', help: 'GET /cluster/health fails while the node is this long behind the leader, e.g. "3s"', default: '3s' },
  { name: 'task-queue-limit', help: 'Tasks kept before the oldest finished tenth is deleted automatically', default: '1000000' },
  { name: 'dump-dir', help: 'Directory where dumps are written', default: './dumps' },
  { name: 'snapshot-dir', help: 'Directory where snapshots are written', default: './snapshots' },
  { name: 'import-dump', help: 'Dump file to start a fresh node from (not with --peers or --join)' },
  { name: 'ignore-missing-dump', help: 'Start normally when the --import-dump file does not exist', bare: true },
  { name: 'ignore-dump-if-db-exists', help: 'Start with the existing database and ignore --import-dump', bare: true },
  { name: 'import-snapshot', help: 'Snapshot file to start a fresh node from (not with --peers or --join)' },
  { name: 'ignore-missing-snapshot', help: 'Start normally when the --import-snapshot file does not exist', bare: true },
  { name: 'ignore-snapshot-if-db-exists', help: 'Start with the existing database and ignore --import-snapshot', bare: true },
  { name: 'schedule-snapshot', help: 'Take a snapshot every N seconds (the flag alone: every 86400 s)', optional: '86400' },
  { name: 'task-webhook-url', help: 'URL notified with the tasks of every finished batch (shown in /webhooks, not editable there)' },
  { name: 'task-webhook-authorization-header', help: 'Authorization header value sent to --task-webhook-url' },
  { name: 'webhook-timeout', help: 'How long one webhook notification attempt may take, e.g. "30s"', default: '30s' },
  { name: 'hub-models-dir', help: 'Cache of models downloaded from the model hub for hubModel embedders (default: <db-path>/hub-models)' },
  { name: 'embedder-timeout', help: 'How long one request to an embedding server (rest, openAi, ollama) may take, e.g. "30s"', default: '30s' },
  { name: 'embedder-attempts', help: 'Attempts to embed one chunk of texts before the task (or search) fails', default: '10' },
  { name: 'embedder-max-retry-delay', help: 'Longest wait between two attempts (the backoff grows tenfold up to it), e.g. "60s"', default: '60s' },
  { name: 'hub-endpoint', help: 'Model hub (or mirror) that hubModel embedders download from (default: HF_ENDPOINT, else https://huggingface.co)' },
];

export function envVarName(flag: string): string {
  return 'TRINE_' + flag.toUpperCase().replace(/-/g, '_');
}

export function usage(): string {
  const lines = ['Usage: trine [flags]', '', 'Every flag can also be set with an environment variable.', ''];
  for (const f of FLAGS) {
    const def = f.default !== undefined ? ` (default: ${f.default})` : '';
    lines.push(`  --${f.name.padEnd(26)} ${envVarName(f.name).padEnd(32)} ${f.help}${def}`);
  }
  return lines.join('\n');
}

function parseHostPort(flag: string, text: string): { host: string; port: number } {
  const m = /^(.*):(\d+)$/.exec(text.trim());
  if (!m || !m[1]) throw new OptionsError(`--${flag}: expected host:port, got \`${text}\`.`);
  const port = Number(m[2]);
  if (port > 65535) throw new OptionsError(`--${flag}: port ${port} is out of range (0-65535).`);
  const host = m[1].replace(/^\[(.*)\]$/, '$1');
  return { host, port };
}

/** `500ms`, `10s`, `2m` or a bare number of milliseconds. */
function parseDuration(flag: string, text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(text);
  if (!m) throw new OptionsError(`--${flag}: expected a duration such as "500ms", "10s" or "1m", got \`${text}\`.`);
  const n = Number(m[1]);
  const ms = m[2] === 's' ? n * 1000 : m[2] === 'm' ? n * 60_000 : n;
  if (ms < 1) throw new OptionsError(`--${flag}: the duration must be at least 1 ms.`);
  return Math.round(ms);
}

function parsePeers(text: string): PeerSpec[] {
  if (!text.trim()) return [];
  const peers: PeerSpec[] = [];
  for (const part of text.split(',')) {
    const m = /^\s*([A-Za-z0-9_-]+)=(.+:\d+)\s*$/.exec(part);
    if (!m) throw new OptionsError(`--peers: expected id=host:port, got \`${part}\`.`);
    parseHostPort('peers', m[2]!);
    peers.push({ id: m[1]!, addr: m[2]! });
  }
  const ids = new Set(peers.map((p) => p.id));
  if (ids.size !== peers.length) throw new OptionsError('--peers: node ids must be unique.');
  return peers;
}

/** Reads flags (`--name value` or `--name=value`) over environment variables over defaults. */
export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): Options {
  const raw = new Map<string, string>();
  for (const f of FLAGS) {
    const v = env[envVarName(f.name)];
    if (v !== undefined && v !== '') raw.set(f.name, v);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new OptionsError(`Unexpected argument \`${arg}\`. Flags start with --.`);
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    const def = FLAGS.find((f) => f.name === name);
    if (!def) throw new OptionsError(`Unknown flag \`--${name}\`. Run with --help to list the flags.`);
    let value: string;
    if (eq >= 0) value = arg.slice(eq + 1);
    else if (def.bare) value = 'true';
    else if (def.optional !== undefined && (argv[i + 1] === undefined || argv[i + 1]!.startsWith('--'))) value = def.optional;
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new OptionsError(`Flag --${name} needs a value.`);
      value = next;
      i++;
    }
    raw.set(name, value);
  }
  const get = (name: string): string | undefined => raw.get(name) ?? FLAGS.find((f) => f.name === name)?.default;

  const envName = get('env')!;
  if (envName !== 'development' && envName !== 'production') {
    throw new OptionsError(`--env: expected development or production, got \`${envName}\`.`);
  }
  const logLevel = get('log-level')!.toLowerCase();
  if (!['off', 'error', 'warn', 'info', 'debug', 'trace'].includes(logLevel)) {
    throw new OptionsError(`--log-level: expected one of off, error, warn, info, debug, trace; got \`${logLevel}\`.`);
  }
  const sizeFlag = (name: string): number => {
    const text = get(name)!;
    const size = parseByteSize(text);
    if (size === null) throw new OptionsError(`--${name}: \`${text}\` is not a size such as "100 MB" or "1 GiB".`);
    return size;
  };
  const limit = sizeFlag('http-payload-size-limit');
  const jsonLimit = Math.min(sizeFlag('http-json-payload-size-limit'), limit);
  const masterKey = get('master-key') ?? null;
  // As the reference: a short key is refused in production only (development warns at start).
  if (envName === 'production' && masterKey !== null && Buffer.byteLength(masterKey) < 16) {
    throw new OptionsError('In production (--env production) the master key must be at least 16 bytes long. Pick a longer --master-key.');
  }
  if (envName === 'production' && masterKey === null) {
    throw new OptionsError(
      'In production (--env production) a master key of at least 16 bytes is required. Set --master-key or TRINE_MASTER_KEY.',
    );
  }
  const nodeId = get('node-id')!;
  if (!/^[A-Za-z0-9_-]+$/.test(nodeId)) throw new OptionsError(`--node-id: \`${nodeId}\` may only hold A-Z a-z 0-9 _ -.`);
  const peers = parsePeers(get('peers') ?? '');
  const raftAddrText = get('raft-addr');
  const raftAddr = raftAddrText ? parseHostPort('raft-addr', raftAddrText) : null;
  if (peers.length > 0) {
    const self = peers.find((p) => p.id === nodeId);
    if (!self) throw new OptionsError(`--peers must list this node (--node-id ${nodeId}).`);
  }
  const join = get('join') ?? null;
  if (join !== null) {
    parseHostPort('join', join);
    if (peers.length > 0) throw new OptionsError('--join and --peers exclude each other: a joining node learns the members from the cluster.');
    if (!raftAddr) throw new OptionsError('--join needs --raft-addr: the address the other members will reach this node at.');
  }
  const tlsParts = (['raft-tls-cert', 'raft-tls-key', 'raft-tls-ca'] as const).map((n) => get(n));
  const tlsSet = tlsParts.filter((v) => v !== undefined).length;
  if (tlsSet !== 0 && tlsSet !== 3) {
    throw new OptionsError('--raft-tls-cert, --raft-tls-key and --raft-tls-ca go together: give all three or none.');
  }
  const thresholdText = get('raft-snapshot-threshold')!;
  if (!/^\d+$/.test(thresholdText) || Number(thresholdText) < 1) {
    throw new OptionsError(`--raft-snapshot-threshold: expected a positive number of entries, got \`${thresholdText}\`.`);
  }
  const flag = (name: string): boolean => {
    const v = get(name);
    if (v === undefined || v === 'false') return false;
    if (v === 'true') return true;
    throw new OptionsError(`--${name}: expected true or false, got \`${v}\`.`);
  };
  const certPath = get('ssl-cert-path') ?? null;
  const keyPath = get('ssl-key-path') ?? null;
  if ((certPath === null) !== (keyPath === null)) {
    throw new OptionsError('--ssl-cert-path and --ssl-key-path go together: give both to serve HTTPS, or neither.');
  }
  const authPath = get('ssl-auth-path') ?? null;
  const sslOnly = ['ssl-auth-path', 'ssl-require-auth', 'ssl-resumption', 'ssl-tickets'].filter((n) => raw.has(n));
  if (certPath === null && sslOnly.length > 0) {
    throw new OptionsError(`--${sslOnly[0]} needs --ssl-cert-path and --ssl-key-path: it configures the API's HTTPS.`);
  }
  if (flag('ssl-require-auth') && authPath === null) {
    throw new OptionsError('--ssl-require-auth needs --ssl-auth-path: the CA that client certificates must be signed by.');
  }
  const ssl: SslOptions | null = certPath === null || keyPath === null
    ? null
    : { certPath, keyPath, authPath, requireAuth: flag('ssl-require-auth'), resumption: flag('ssl-resumption'), tickets: flag('ssl-tickets') };
  const logsMode = get('experimental-logs-mode') ?? (envName === 'production' ? 'json' : 'human');
  if (logsMode !== 'human' && logsMode !== 'json') {
    throw new OptionsError(`--experimental-logs-mode: expected human or json, got \`${logsMode}\`.`);
  }
  const importDump = get('import-dump') ?? null;
  const importSnapshot = get('import-snapshot') ?? null;
  if (importDump !== null && importSnapshot !== null) {
    throw new OptionsError('--import-dump and --import-snapshot exclude each other: a node starts from one of them.');
  }
  if ((importDump !== null || importSnapshot !== null) && (peers.length > 0 || join !== null)) {
    throw new OptionsError(
      'An import runs on a fresh single node (no --peers, no --join). To restore a cluster, import on one node started with --raft-addr, then let the others --join it: they copy the imported state from it.',
    );
  }
  const readConsistency = get('read-consistency')!;
  if (readConsistency !== 'consistent' && readConsistency !== 'stale') {
    throw new OptionsError(`--read-consistency: expected consistent or stale, got \`${readConsistency}\`.`);
  }
  const lagEntriesText = get('health-max-lag-entries')!;
  if (!/^\d+$/.test(lagEntriesText)) {
    throw new OptionsError(`--health-max-lag-entries: expected a number of log entries, got \`${lagEntriesText}\`.`);
  }
  const queueLimitText = get('task-queue-limit')!;
  if (!/^\d+$/.test(queueLimitText) || Number(queueLimitText) < 1) {
    throw new OptionsError(`--task-queue-limit: expected a positive number of tasks, got \`${queueLimitText}\`.`);
  }
  const scheduleText = get('schedule-snapshot');
  if (scheduleText !== undefined && (!/^\d+$/.test(scheduleText) || Number(scheduleText) < 1)) {
    throw new OptionsError(`--schedule-snapshot: expected a positive number of seconds, got \`${scheduleText}\`.`);
  }
  const webhookUrl = get('task-webhook-url') ?? null;
  if (webhookUrl !== null && !/^https?:\/\/[^/]/i.test(webhookUrl)) {
    throw new OptionsError(`--task-webhook-url: expected an http:// or https:// URL, got \`${webhookUrl}\`.`);
  }
  const webhookAuth = get('task-webhook-authorization-header') ?? null;
  if (webhookAuth !== null && webhookUrl === null) {
    throw new OptionsError('--task-webhook-authorization-header needs --task-webhook-url: it is sent to that URL.');
  }
  const attemptsText = get('embedder-attempts')!;
  if (!/^\d+$/.test(attemptsText) || Number(attemptsText) < 1 || Number(attemptsText) > 100) {
    throw new OptionsError(`--embedder-attempts: expected a number of attempts from 1 to 100, got \`${attemptsText}\`.`);
  }
  const hubEndpoint = (get('hub-endpoint') ?? env['HF_ENDPOINT'] ?? DEFAULT_HUB_ENDPOINT).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/.test(hubEndpoint)) {
    throw new OptionsError(`--hub-endpoint: expected an http:// or https:// address, got \`${hubEndpoint}\`.`);
  }
  return {
    dbPath: get('db-path')!,
    httpAddr: parseHostPort('http-addr', get('http-addr')!),
    masterKey,
    env: envName,
    httpPayloadSizeLimit: limit,
    httpJsonPayloadSizeLimit: jsonLimit,
    logLevel: logLevel as LogLevel,
    nodeId,
    raftAddr,
    peers,
    clusterSecret: get('cluster-secret') ?? null,
    join,
    raftTls: tlsSet === 3 ? { cert: tlsParts[0]!, key: tlsParts[1]!, ca: tlsParts[2]! } : null,
    ssl,
    logsMode,
    raftSnapshotThreshold: Number(thresholdText),
    writeTimeoutMs: parseDuration('write-timeout', get('write-timeout')!),
    readConsistency,
    readTimeoutMs: parseDuration('read-timeout', get('read-timeout')!),
    readLeaseMs: /^\s*0+(\.0*)?\s*(ms|s|m)?\s*$/.test(get('read-lease')!) ? 0 : parseDuration('read-lease', get('read-lease')!),
    healthMaxLagEntries: Number(lagEntriesText),
    healthMaxLagMs: parseDuration('health-max-lag', get('health-max-lag')!),
    taskQueueLimit: Number(queueLimitText),
    dumpDir: get('dump-dir')!,
    snapshotDir: get('snapshot-dir')!,
    importDump,
    ignoreMissingDump: flag('ignore-missing-dump'),
    ignoreDumpIfDbExists: flag('ignore-dump-if-db-exists'),
    importSnapshot,
    ignoreMissingSnapshot: flag('ignore-missing-snapshot'),
    ignoreSnapshotIfDbExists: flag('ignore-snapshot-if-db-exists'),
    scheduleSnapshot: scheduleText === undefined ? null : Number(scheduleText),
    taskWebhook: webhookUrl === null ? null : { url: webhookUrl, authorization: webhookAuth },
    webhookTimeoutMs: parseDuration('webhook-timeout', get('webhook-timeout')!),
    hubModelsDir: get('hub-models-dir') ?? pathJoin(get('db-path')!, 'hub-models'),
    hubEndpoint,
    hubToken: env['HF_TOKEN'] || null,
    embedderTimeoutMs: parseDuration('embedder-timeout', get('embedder-timeout')!),
    embedderAttempts: Number(attemptsText),
    embedderMaxRetryDelayMs: parseDuration('embedder-max-retry-delay', get('embedder-max-retry-delay')!),
  };
}
