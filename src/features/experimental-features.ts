import { KeySpace } from '../store/keys.js';
import type { KvReader, WriteBatch } from '../store/kv.js';
import type { ConfigHandler } from '../tasks/state-machine.js';

/**
 * Runtime-togglable experimental features (`/experimental-features`). The state is node-wide
 * and changes through the replicated log as a config command, so every node of a cluster
 * holds the same flags; all default to off.
 */

import { FEATURE_NAMES, featureNotEnabled, isFeatureName, type FeatureName, type Features, type GatedFeature } from '../engine/feature-switches.js';

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
