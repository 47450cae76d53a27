import { isValidIndexUid } from '../engine/indexes/index-uid.js';

/**
 * Key actions and index patterns: what an API key may do, and where.
 *
 * The list order matters: it is the order the reference prints in the "Unknown value" error
 * of `POST /keys`, and clients compare those messages.
 */
export const ACTIONS = [
  '*',
  'search',
  'documents.*',
  'documents.add',
  'documents.get',
  'documents.delete',
  'indexes.*',
  'indexes.create',
  'indexes.get',
  'indexes.update',
  'indexes.delete',
  'indexes.swap',
  'tasks.*',
  'tasks.cancel',
  'tasks.delete',
  'tasks.get',
  'settings.*',
  'settings.get',
  'settings.update',
  'stats.*',
  'stats.get',
  'metrics.*',
  'metrics.get',
  'dumps.*',
  'dumps.create',
  'snapshots.*',
  'snapshots.create',
  'version',
  'keys.create',
  'keys.get',
  'keys.update',
  'keys.delete',
  'experimental.get',
  'experimental.update',
  'export',
  'network.get',
  'network.update',
  'chatCompletions',
  'chats.*',
  'chats.get',
  'chats.delete',
  'chatsSettings.*',
  'chatsSettings.get',
  'chatsSettings.update',
  '*.get',
  'webhooks.get',
  'webhooks.update',
  'webhooks.delete',
  'webhooks.create',
  'webhooks.*',
  'indexes.compact',
  'fields.post',
  'tasks.compact',
  'dynamicSearchRules.get',
  'dynamicSearchRules.create',
  'dynamicSearchRules.update',
  'dynamicSearchRules.delete',
  'dynamicSearchRules.*',
] as const;

export type Action = (typeof ACTIONS)[number];

/** `*.get` is the read-only set: every action that only reads, except reading keys. */
const READ_ACTIONS: readonly Action[] = [
  'search',
  'documents.get',
  'export',
  'indexes.get',
  'tasks.get',
  'settings.get',
  'stats.get',
  'metrics.get',
  'version',
  'experimental.get',
  'network.get',
  'chats.get',
  'chatsSettings.get',
  'webhooks.get',
  'fields.post',
  'dynamicSearchRules.get',
];

/** Wildcards other than `*` and `*.get`: `group.*` stands for the members listed. */
const GROUPS: Partial<Record<Action, readonly Action[]>> = {
  'documents.*': ['documents.add', 'documents.get', 'documents.delete'],
  'indexes.*': ['indexes.create', 'indexes.get', 'indexes.update', 'indexes.delete', 'indexes.swap', 'indexes.compact'],
  'tasks.*': ['tasks.get', 'tasks.delete', 'tasks.cancel', 'tasks.compact'],
  'settings.*': ['settings.get', 'settings.update'],
  'stats.*': ['stats.get'],
  'metrics.*': ['metrics.get'],
  'dumps.*': ['dumps.create'],
  'snapshots.*': ['snapshots.create'],
  'chats.*': ['chats.get', 'chats.delete'],
  'chatsSettings.*': ['chatsSettings.get', 'chatsSettings.update'],
  'webhooks.*': ['webhooks.get', 'webhooks.update', 'webhooks.delete', 'webhooks.create'],
  'dynamicSearchRules.*': [
    'dynamicSearchRules.get',
    'dynamicSearchRules.create',
    'dynamicSearchRules.update',
    'dynamicSearchRules.delete',
  ],
};

/** Every concrete action a key holding `actions` may perform (wildcards included, as routes may name one). */
export function expandActions(actions: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const a of actions) {
    if (a === '*') {
      // The reference's `*` covers every action but the `*.get` marker itself.
      for (const x of ACTIONS) if (x !== '*.get') out.add(x);
      continue;
    }
    out.add(a);
    if (a === '*.get') for (const x of READ_ACTIONS) out.add(x);
    for (const x of GROUPS[a as Action] ?? []) out.add(x);
  }
  return out;
}

/**
 * Actions that concern the whole instance rather than indexes. A key limited to some indexes
 * may not hold them: the reference refuses the key at creation (`index_scoped_api_key_with_global_action`).
 */
const GLOBAL_ACTIONS: ReadonlySet<string> = new Set([
  'keys.create',
  'keys.get',
  'keys.update',
  'keys.delete',
  'dumps.*',
  'dumps.create',
  'snapshots.*',
  'snapshots.create',
  'version',
  'metrics.*',
  'metrics.get',
  'experimental.get',
  'experimental.update',
  'export',
  'network.get',
  'network.update',
  'chats.*',
  'chats.get',
  'chats.delete',
  'chatsSettings.*',
  'chatsSettings.get',
  'chatsSettings.update',
  'webhooks.*',
  'webhooks.get',
  'webhooks.update',
  'webhooks.delete',
  'webhooks.create',
  'dynamicSearchRules.*',
  'dynamicSearchRules.get',
  'dynamicSearchRules.create',
  'dynamicSearchRules.update',
  'dynamicSearchRules.delete',
  'tasks.compact',
]);

export function isGlobalAction(a: string): boolean {
  return GLOBAL_ACTIONS.has(a);
}

// ---- index patterns -------------------------------------------------------------------------

/** `*`, an index uid, or an index uid prefix followed by `*`. */
export function isValidIndexPattern(p: string): boolean {
  if (p === '*') return true;
  const base = p.endsWith('*') ? p.slice(0, -1) : p;
  return isValidIndexUid(base);
}

export function invalidIndexPatternMessage(p: string): string {
  return `\`${p}\` is not a valid index uid pattern. Index uid patterns can be an integer or a string containing only alphanumeric characters, hyphens (-), underscores (_), and optionally end with a star (*).`;
}

export { patternMatches, anyPatternMatches } from '../engine/indexes/index-uid.js';
import { patternMatches } from '../engine/indexes/index-uid.js';

/**
 * The most specific of `patterns` matching `index`: an exact uid beats a prefix, a longer
 * prefix beats a shorter one (how the reference picks the tenant-token rule for an index).
 */
export function mostSpecificPattern(patterns: Iterable<string>, index: string): string | null {
  let best: string | null = null;
  const rank = (p: string): [number, number] => [p.endsWith('*') ? 0 : 1, p.length];
  for (const p of patterns) {
    if (!patternMatches(p, index)) continue;
    if (best === null) {
      best = p;
      continue;
    }
    const [e1, l1] = rank(p);
    const [e2, l2] = rank(best);
    if (e1 > e2 || (e1 === e2 && l1 > l2)) best = p;
  }
  return best;
}
