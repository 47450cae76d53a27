// `_formatted` and `_matchesPosition` for one hit. Every displayed leaf is visited: the
// options of the attributes to highlight or crop that cover it are merged, strings and
// numbers go through the matcher (numbers always come out as strings), arrays and
// objects are highlighted but never cropped, like the reference.

import type { Doc } from '../documents/primary-key.js';
import { projectFields } from '../documents/project.js';
import type { IndexState } from '../fulltext/index-state.js';
import { isPathOrChild } from '../fulltext/field-table.js';
import type { Unit } from '../search/derivations.js';
import { MatchingWords } from './matching-words.js';
import { TextMatcher, type FormatOptions } from './matcher.js';

export interface HitFormatRequest {
  attributesToHighlight: string[] | null;
  attributesToCrop: string[] | null;
  cropLength: number;
  cropMarker: string;
  highlightPreTag: string;
  highlightPostTag: string;
  showMatchesPosition: boolean;
  /** `attributesToRetrieve` (null: all displayed). */
  retrieve: string[] | null;
  /** The index's `displayedAttributes`: a target they hide does not ask for `_formatted`. */
  displayed: readonly string[];
  locales: string[] | null;
}

export interface MatchBounds {
  start: number;
  length: number;
  indices?: number[];
}

interface Target {
  name: string;
  highlight: boolean;
  crop: number | null;
}

function covers(name: string, path: string): boolean {
  return name === '*' || isPathOrChild(name, path) || isPathOrChild(path, name);
}

export class HitFormatter {
  private readonly words: MatchingWords;
  private readonly targets: Target[] = [];

  constructor(
    private readonly state: IndexState,
    units: readonly Unit[],
    private readonly req: HitFormatRequest,
  ) {
    this.words = new MatchingWords(units);
    for (const name of req.attributesToHighlight ?? []) this.targets.push({ name, highlight: true, crop: null });
    for (const spec of req.attributesToCrop ?? []) {
      const at = spec.lastIndexOf(':');
      let name = spec;
      let len = req.cropLength;
      if (at > 0) {
        const n = Number(spec.slice(at + 1));
        name = spec.slice(0, at);
        if (Number.isInteger(n) && n >= 0) len = n;
      }
      this.targets.push({ name, highlight: false, crop: len });
    }
  }

  private wanted: boolean | null = null;

  /**
   * A target only counts when it names a field the index knows (or `*`) and the displayed
   * attributes show it: as in the reference, asking to highlight or crop hidden fields
   * alone gives no `_formatted` at all.
   */
  private known(name: string): boolean {
    if (name === '*') return true;
    const shown = this.req.displayed;
    if (!shown.includes('*') && !shown.some((d) => isPathOrChild(d, name) || isPathOrChild(name, d))) return false;
    return this.state.names.names.some((n) => isPathOrChild(name, n) || isPathOrChild(n, name));
  }

  get wantsFormatted(): boolean {
    return (this.wanted ??= this.targets.some((t) => this.known(t.name)));
  }

  private optionsFor(path: string): FormatOptions | null {
    let highlight = false;
    let crop: number | null = null;
    let any = false;
    for (const t of this.targets) {
      if (!covers(t.name, path)) continue;
      any = true;
      if (t.highlight) highlight = true;
      if (t.crop !== null && crop === null) crop = t.crop;
    }
    if (!any) return null;
    return {
      highlight,
      crop,
      preTag: this.req.highlightPreTag,
      postTag: this.req.highlightPostTag,
      cropMarker: this.req.cropMarker,
    };
  }

  /**
   * Formats a displayed document. `formatted` is null when no attribute to highlight or
   * crop is known; `matches` is null unless `showMatchesPosition`.
   */
  format(displayed: Doc): { formatted: Doc | null; matches: Record<string, MatchBounds[]> | null } {
    const wantFormatted = this.wantsFormatted;
    const matches: Record<string, MatchBounds[]> | null = this.req.showMatchesPosition ? {} : null;
    if (!wantFormatted && !matches) return { formatted: null, matches: null };
    const tokenizer = this.state.tokenizer;
    const locales = this.req.locales;

    const leaf = (text: string, path: string, opts: FormatOptions | null, index: number[] | null): string => {
      if (!opts && !matches) return text;
      const m = new TextMatcher(text, tokenizer, this.words, locales);
      if (matches) {
        const bounds = m.bounds();
        if (bounds.length > 0) {
          const list = (matches[path] ??= []);
          for (const b of bounds) list.push(index ? { ...b, indices: [...index] } : b);
        }
      }
      return opts ? m.format(opts) : text;
    };

    const walk = (value: unknown, path: string, opts: FormatOptions | null, index: number[] | null): unknown => {
      if (typeof value === 'string') return leaf(value, path, opts, index);
      if (typeof value === 'number' || typeof value === 'bigint') return leaf(String(value), path, opts, index);
      if (Array.isArray(value)) {
        const inner = opts ? { ...opts, crop: null } : null;
        return value.map((v, i) => walk(v, path, inner, [...(index ?? []), i]));
      }
      if (value !== null && typeof value === 'object') {
        const out: Doc = {};
        for (const [k, v] of Object.entries(value as Doc)) {
          const child = `${path}.${k}`;
          const childOpts = opts ? { ...opts, crop: null } : this.optionsFor(child);
          out[k] = walk(v, child, childOpts, index);
        }
        return out;
      }
      return value;
    };

    const formattedAll: Doc = {};
    for (const [k, v] of Object.entries(displayed)) formattedAll[k] = walk(v, k, this.optionsFor(k), null);
    if (!wantFormatted) return { formatted: null, matches };
    const retrieve = this.req.retrieve ?? ['*'];
    const selectors = retrieve.includes('*')
      ? ['*']
      : [...retrieve, ...this.targets.filter((t) => this.known(t.name)).map((t) => t.name)];
    return { formatted: projectFields(formattedAll, selectors), matches };
  }
}
