// Benchmark entry: `npm run bench -- <suite>` (every suite when none is named).
import { runClusterBench } from './cluster.js';
import { runFilterBench } from './filters.js';
import { runVectorBench } from './vectors.js';

const SUITES: Record<string, () => Promise<void>> = {
  filters: runFilterBench,
  cluster: runClusterBench,
  vectors: runVectorBench,
};

async function main(): Promise<void> {
  const wanted = process.argv[2];
  if (wanted !== undefined && !(wanted in SUITES)) {
    console.error(`unknown suite \`${wanted}\`; suites: ${Object.keys(SUITES).join(', ')}`);
    process.exit(2);
  }
  for (const [name, run] of Object.entries(SUITES)) {
    if (wanted !== undefined && wanted !== name) continue;
    console.log(`== ${name}`);
    await run();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
