// Benchmark entry: `npm run bench -- <suite>`; the search suite when none is named, `all` for every suite but `scale`.
import { runClusterBench } from './cluster.js';
import { runEmbedBench } from './embed.js';
import { runFilterBench } from './filters.js';
import { runLongDocsBench } from './longdocs.js';
import { runScaleBench } from './scale.js';
import { runSearchBench } from './search.js';
import { runVectorBench } from './vectors.js';

const SUITES: Record<string, () => Promise<void>> = {
  search: runSearchBench,
  longdocs: runLongDocsBench,
  filters: runFilterBench,
  cluster: runClusterBench,
  vectors: runVectorBench,
  embed: runEmbedBench,
  scale: runScaleBench,
};

async function main(): Promise<void> {
  const arg = process.argv[2] ?? 'search';
  const wanted = arg === 'all' ? undefined : arg;
  if (wanted !== undefined && !(wanted in SUITES)) {
    console.error(`unknown suite \`${wanted}\`; suites: ${Object.keys(SUITES).join(', ')}`);
    process.exit(2);
  }
  for (const [name, run] of Object.entries(SUITES)) {
    if (wanted !== undefined && wanted !== name) continue;
    // A million documents take many minutes: `scale` runs only when named.
    if (wanted === undefined && name === 'scale') continue;
    console.log(`== ${name}`);
    await run();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
