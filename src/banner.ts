// What a node prints first when its logs are for people: what it runs, where its data is,
// where it listens, and what to do about the master key.

import type { Options } from './config/options.js';
import { VERSION } from './version.js';

export function banner(options: Options, url: string): string {
  const row = (name: string, value: string) => `${`${name}:`.padEnd(22)}${JSON.stringify(value)}`;
  const cluster = options.peers.length > 1 ? `member of a cluster of ${options.peers.length}` : options.join ? 'joining a cluster' : 'single node';
  const lines = [
    '',
    '  _____     _',
    ' |_   _| _(_)_ _  ___',
    "   | || '_| | ' \\/ -_)",
    '   |_||_| |_|_||_\\___|',
    '',
    row('Database path', options.dbPath),
    row('Server listening on', url),
    row('Environment', options.env),
    row('Node', `${options.nodeId} (${cluster})`),
    row('Commit SHA', VERSION.commitSha),
    row('Commit date', VERSION.commitDate),
    row('Package version', VERSION.pkgVersion),
    '',
  ];
  if (options.masterKey === null) {
    lines.push(
      'No master key was given: the API accepts unidentified requests from anyone who can reach it.',
      'Start with --master-key (or TRINE_MASTER_KEY) to protect it; --env production requires one.',
      '',
    );
  }
  lines.push('Logs below are for people; --experimental-logs-mode json writes one JSON object a line.', '');
  return lines.join('\n') + '\n';
}
