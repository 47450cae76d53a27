#!/usr/bin/env node
import { OptionsError, parseOptions, usage } from './config/options.js';
import { startNode } from './server/node.js';
import { banner } from './banner.js';
import { tuneGarbageCollection } from './util/gc-tuning.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usage());
    return;
  }
  let options;
  try {
    options = parseOptions(argv);
  } catch (e) {
    if (e instanceof OptionsError) {
      console.error(`error: ${e.message}`);
      process.exit(1);
    }
    throw e;
  }
  tuneGarbageCollection();
  const node = await startNode(options);
  // Readable logs start with the banner a person looks for; log shippers get the same in one JSON line.
  if (options.logsMode === 'human') process.stdout.write(banner(options, node.url));
  if (options.masterKey !== null && Buffer.byteLength(options.masterKey) < 16) {
    node.app.log.warn('The master key is shorter than 16 bytes: fine for development, refused with --env production. Pick a longer, random key for anything exposed.');
  }
  node.app.log.info(
    { url: node.url, dbPath: options.dbPath, env: options.env, nodeId: options.nodeId },
    options.masterKey ? 'Trine is listening' : 'Trine is listening without a master key: the API is open to anyone who can reach it',
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    node.app.log.info({ signal }, 'shutting down');
    await node.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((e) => {
  console.error(`error: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
