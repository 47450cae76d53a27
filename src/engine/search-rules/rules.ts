// Dynamic search rules: merchandising rules that pin chosen documents at chosen positions of
// the results when a search meets their conditions. Node-wide (a rule may name documents of
// any index), changed by tasks of the log (`dsrUpdate`, `dsrClear`), read by every search.

import { ApiError } from '../../errors/api-error.js';
import { KeySpace } from '../../store/keys.js';
import type { KvReader, WriteBatch } from '../../store/kv.js';

export interface PinAction {
  selector: { indexUid?: string; id: string };
  action: { type: 'pin'; position: number };
}

export interface RuleConditions {
  query?: { isEmpty?: boolean; words?: string };
  time?: { start?: string; end?: string };
}

export interface SearchRule {
  uid: string;
  description?: string;
  /** Lower wins: a document pinned by several rules, or several documents at one position. */
  precedence?: number;
  active: boolean;
  conditions: RuleConditions;
  actions: PinAction[];
  lastUpdatedAt: string;
}

/** A partial change as `PATCH /dynamic-search-rules/{uid}` sends it: `null` resets a field. */
export interface RuleUpdate {
  description?: string | null;
  precedence?: number | null;
  active?: boolean | null;
  conditions?: RuleConditions | null;
  actions?: PinAction[] | null;
}

const RULES = new KeySpace('sr');

export function ruleNotFound(uid: string): ApiError {
  return new ApiError('dynamic_search_rule_not_found', `Dynamic search rule \`${uid}\` not found.`);
}

/** The rule as the API shows it, keys in a fixed order. */
export function ruleView(r: SearchRule): Record<string, unknown> {
  const out: Record<string, unknown> = { uid: r.uid };
  if (r.description !== undefined) out['description'] = r.description;
  if (r.precedence !== undefined) out['precedence'] = r.precedence;
  out['active'] = r.active;
  out['conditions'] = r.conditions;
  out['actions'] = r.actions;
  out['lastUpdatedAt'] = r.lastUpdatedAt;
  return out;
}

/** The rule a change makes of `current` (absent: a new rule); throws when it cannot be one. */
export function applyRuleUpdate(uid: string, current: SearchRule | undefined, u: RuleUpdate, at: string): SearchRule {
  const actions = u.actions === undefined ? current?.actions : (u.actions ?? undefined);
  if (!actions) {
    throw new ApiError(
      'invalid_dynamic_search_rule_actions',
      current
        ? `Cannot reset the \`actions\` of dynamic search rule \`${uid}\`: a rule needs at least one action.`
        : `Dynamic search rule \`${uid}\` does not exist yet: creating it needs \`actions\`.`,
    );
  }
  const next: SearchRule = {
    uid,
    active: u.active === undefined ? (current?.active ?? true) : (u.active ?? true),
    conditions: u.conditions === undefined ? (current?.conditions ?? {}) : (u.conditions ?? {}),
    actions,
    lastUpdatedAt: at,
  };
  const description = u.description === undefined ? current?.description : (u.description ?? undefined);
  if (description !== undefined) next.description = description;
  const precedence = u.precedence === undefined ? current?.precedence : (u.precedence ?? undefined);
  if (precedence !== undefined) next.precedence = precedence;
  return next;
}

/** Lowercased words without accents: how queries and rule words are compared. */
export function ruleWords(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

function containsRun(haystack: readonly string[], needle: readonly string[]): boolean {
  if (needle.length === 0) return true;
  for (let i = 0; i + needle.length <= haystack.length; i++) {
    if (needle.every((w, k) => haystack[i + k] === w)) return true;
  }
  return false;
}

/** Whether `rule` applies to a search for `q` at time `now`. */
export function ruleApplies(rule: SearchRule, q: string | null | undefined, now: number): boolean {
  if (!rule.active) return false;
  const c = rule.conditions;
  const query = (q ?? '').trim();
  if (c.query) {
    if (c.query.isEmpty !== undefined && c.query.isEmpty !== (query === '')) return false;
    if (c.query.words !== undefined && !containsRun(ruleWords(query), ruleWords(c.query.words))) return false;
  }
  if (c.time) {
    if (c.time.start !== undefined && now < Date.parse(c.time.start)) return false;
    if (c.time.end !== undefined && now > Date.parse(c.time.end)) return false;
  }
  return true;
}

export interface PinRequest {
  /** The document's id in the index searched. */
  id: string;
  position: number;
  /** Order among all pins: precedence, then rule uid, then the action's place in its rule. */
  rank: number;
  rule: string;
}

/** The rules of the node, kept in memory (they are few) and in the store. */
export class SearchRuleStore {
  private rules = new Map<string, SearchRule>();

  get(uid: string): SearchRule | undefined {
    return this.rules.get(uid);
  }

  /** By uid, as the reference lists them. */
  list(): SearchRule[] {
    return [...this.rules.values()].sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  }

  get size(): number {
    return this.rules.size;
  }

  put(wb: WriteBatch, rule: SearchRule): void {
    wb.put(RULES.key(rule.uid), JSON.stringify(rule));
  }

  del(wb: WriteBatch, uid: string): void {
    wb.del(RULES.key(uid));
  }

  clear(wb: WriteBatch): void {
    wb.delPrefix(RULES.prefix);
  }

  /** Makes committed changes visible (`null` removes a rule). */
  publish(changes: Map<string, SearchRule | null> | 'clear'): void {
    if (changes === 'clear') {
      this.rules.clear();
      return;
    }
    for (const [uid, r] of changes) {
      if (r === null) this.rules.delete(uid);
      else this.rules.set(uid, r);
    }
  }

  async load(reader: KvReader): Promise<void> {
    const rules = new Map<string, SearchRule>();
    for await (const { value } of reader.scan({ prefix: RULES.prefix })) {
      const r = JSON.parse(value.toString()) as SearchRule;
      rules.set(r.uid, r);
    }
    this.rules = rules;
  }

  /**
   * The pins the applying rules ask for on `indexUid`, best first: by precedence (rules
   * without one last), then rule uid, then the order of the actions in the rule.
   */
  pinsFor(indexUid: string, q: string | null | undefined, now: number): PinRequest[] {
    const applying = this.list()
      .filter((r) => ruleApplies(r, q, now))
      .sort((a, b) => (a.precedence ?? Infinity) - (b.precedence ?? Infinity));
    const out: PinRequest[] = [];
    for (const r of applying) {
      for (const a of r.actions) {
        if (a.selector.indexUid !== undefined && a.selector.indexUid !== indexUid) continue;
        out.push({ id: a.selector.id, position: a.action.position, rank: out.length, rule: r.uid });
      }
    }
    return out;
  }
}
