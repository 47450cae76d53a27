/**
 * The layer rules of the source tree (docs/architecture.md explains them). `npm test` runs
 * them: an import that breaks one fails the build.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'engine-stays-below',
      comment: 'The engine knows nothing of HTTP, tasks, replication, Raft, backups, keys, metrics or the node wiring; feature switches reach it as data.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^src/(http|tasks|replication|raft|backup|server|features|auth|metrics)/' },
    },
    {
      name: 'raft-core-is-pure',
      comment: 'The Raft core is a state machine: no I/O, no clock, nothing outside itself.',
      severity: 'error',
      from: { path: '^src/raft/core/' },
      to: { pathNot: '^src/raft/core/' },
    },
    {
      name: 'store-below-engine',
      comment: 'The key-value store knows nothing of what is stored in it.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/(engine|tasks|http|replication|raft|backup|server)/' },
    },
    {
      name: 'tasks-below-http',
      comment: 'Tasks are scheduled and applied without knowing how they were requested.',
      severity: 'error',
      from: { path: '^src/tasks/' },
      to: { path: '^src/(http|server)/' },
    },
    {
      name: 'nothing-imports-server',
      comment: 'server/ builds a node from the pieces; only entry points (main, tools) and tests start one.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(main\.ts$|tools/|server/)' },
      to: { path: '^src/server/' },
    },
    {
      name: 'no-cycles',
      comment: 'Modules that import each other at run time have no order to be loaded in. Checked on the compiled JavaScript, where type-only imports are gone: types may refer both ways.',
      severity: 'error',
      from: { path: '^dist/src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist/)?src/gen/' },
    tsPreCompilationDeps: true,
  },
};
