// The experimental switches, as data: their names, and how a refusal names them. The engine
// takes the state of a switch as a value (a flag in its options); it never reads the node's
// switches itself. Where they are stored and changed is `features/experimental-features.ts`.

import { ApiError } from '../errors/api-error.js';

/** Feature names in the order the reference lists them (with `vectorStoreSetting`, which Trine keeps). */
export const FEATURE_NAMES = [
  'metrics',
  'logsRoute',
  'editDocumentsByFunction',
  'containsFilter',
  'dynamicSearchRules',
  'network',
  'getTaskDocumentsRoute',
  'taskQueueCompactionRoute',
  'compositeEmbedders',
  'chatCompletions',
  'multimodal',
  'vectorStoreSetting',
  'foreignKeys',
  'disableDocumentsFetchQueue',
  'legacySearch',
  'renderRoute',
] as const;

export type FeatureName = (typeof FEATURE_NAMES)[number];
export type Features = Record<FeatureName, boolean>;

/** Features that gate something, with how a refusal names them and where the reference sends people. */
const LABELS = {
  metrics: ['metrics', 'https://github.com/meilisearch/product/discussions/625'],
  logsRoute: ['logs route', 'https://github.com/orgs/meilisearch/discussions/721'],
  editDocumentsByFunction: ['edit documents by function', 'https://github.com/orgs/meilisearch/discussions/762'],
  containsFilter: ['contains filter', 'https://github.com/orgs/meilisearch/discussions/763'],
  dynamicSearchRules: ['dynamic search rules', 'https://github.com/orgs/meilisearch/discussions/884'],
  network: ['network', 'https://github.com/orgs/meilisearch/discussions/805'],
  getTaskDocumentsRoute: ['get task documents route', 'https://github.com/orgs/meilisearch/discussions/808'],
  taskQueueCompactionRoute: ['task queue compaction route', 'https://github.com/orgs/meilisearch/discussions/883'],
  compositeEmbedders: ['composite embedders', 'https://github.com/orgs/meilisearch/discussions/816'],
  chatCompletions: ['chat completions', 'https://github.com/orgs/meilisearch/discussions/835'],
  multimodal: ['multimodal', 'https://github.com/orgs/meilisearch/discussions/846'],
  vectorStoreSetting: ['vector_store_setting', 'https://github.com/orgs/meilisearch/discussions/860'],
  foreignKeys: ['foreign_keys', 'https://github.com/orgs/meilisearch/discussions/873'],
  renderRoute: ['render_route', 'https://github.com/orgs/meilisearch/discussions/888'],
} as const satisfies Partial<Record<FeatureName, readonly [string, string]>>;

/** A feature whose absence refuses an action (the others only change behaviour). */
export type GatedFeature = keyof typeof LABELS;

export function isFeatureName(name: string): name is FeatureName {
  return (FEATURE_NAMES as readonly string[]).includes(name);
}

/** The reference's `feature_not_enabled` error: ``<action> requires enabling the `<feature>` experimental feature. See <link>``. */
export function featureNotEnabled(feature: GatedFeature, action: string): ApiError {
  const [label, link] = LABELS[feature];
  return new ApiError('feature_not_enabled', `${action} requires enabling the \`${label}\` experimental feature. See ${link}`);
}
