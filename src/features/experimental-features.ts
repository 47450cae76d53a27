import { ApiError } from '../errors/api-error.js';
import { KeySpace } from '../store/keys.js';
import type { KvReader, WriteBatch } from '../store/kv.js';
import type { ConfigHandler } from '../tasks/state-machine.js';

/**
 * Runtime-togglable experimental features (`/experimental-features`). The state is node-wide
 * and changes through the replicated log as a config command, so every node of a cluster
 * holds the same flags; all default to off.
 */

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

export function defaultFeatures(): Features {
  return Object.fromEntries(FEATURE_NAMES.map((f) => [f, false])) as Features;
}

const FEATURES = new KeySpace('xf');
const STATE_KEY = FEATURES.key('runtime');

/** The config handler holding the flags; `apply` takes a validated partial update. */
export class ExperimentalFeatures implements ConfigHandler {
  static readonly COMMAND = 'experimentalFeatures';
  private state: Features = defaultFeatures();

  get(): Features {
    return { ...this.state };
  }

  isEnabled(feature: FeatureName): boolean {
    return this.state[feature];
  }

  /** Throws `feature_not_enabled` unless `feature` is on. */
  check(feature: GatedFeature, action: string): void {
    if (!this.state[feature]) throw featureNotEnabled(feature, action);
  }

  apply(op: unknown, _at: number, wb: WriteBatch): unknown {
    const next = { ...this.state };
    for (const [name, value] of Object.entries(op as Record<string, unknown>)) {
      // Ops were validated before being proposed; anything else in the log is ignored, not trusted.
      if (isFeatureName(name) && typeof value === 'boolean') next[name] = value;
    }
    wb.put(STATE_KEY, JSON.stringify(next));
    this.state = next;
    return { ...next };
  }

  async load(reader: KvReader): Promise<void> {
    const raw = await reader.get(STATE_KEY);
    const stored = raw ? (JSON.parse(raw.toString('utf8')) as Partial<Features>) : {};
    const state = defaultFeatures();
    for (const name of FEATURE_NAMES) if (typeof stored[name] === 'boolean') state[name] = stored[name];
    this.state = state;
  }
}
