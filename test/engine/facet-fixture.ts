import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeySpace, RocksStore } from '../../src/store/index.js';
import type { Doc } from '../../src/engine/documents/primary-key.js';
import { FacetIndex } from '../../src/engine/facets/facet-index.js';
import type { DocChange } from '../../src/engine/structures/search-index.js';
import { defaultSettings, type IndexSettings } from '../../src/engine/settings/settings.js';
import { FilterEvaluator } from '../../src/engine/filter/evaluate.js';
import { parseFilter } from '../../src/engine/filter/filter-tree.js';
import { FilterError } from '../../src/engine/filter/errors.js';
import { directSource } from '../../src/engine/vector/embedding-source.js';
import { embedderEnvironment } from '../../src/engine/vector/embedder-environment.js';

/** A facet index on a real store in a temp dir, fed documents by docid like the batch processor does. */
export class FacetFixture {
  docs = new Map<number, Doc>();
  private constructor(
    readonly store: RocksStore,
    readonly dir: string,
    public index: FacetIndex,
    public settings: IndexSettings,
  ) {}

  static async open(settings: Partial<IndexSettings>): Promise<FacetFixture> {
    const dir = mkdtempSync(join(tmpdir(), 'trine-facets-'));
    const store = await RocksStore.open(dir);
    const s = { ...defaultSettings(), ...settings };
    const index = await FacetIndex.open({ store, space: new KeySpace('f'), settings: s, embeddings: directSource, embedderEnv: embedderEnvironment() });
    return new FacetFixture(store, dir, index, s);
  }

  /** Adds or replaces documents (docid → doc), or deletes with `null`. */
  async apply(changes: Record<number, Doc | null>): Promise<void> {
    const list: DocChange[] = Object.entries(changes).map(([k, after]) => {
      const docid = Number(k);
      return { docid, before: this.docs.get(docid) ?? null, after };
    });
    const update = await this.index.prepare(list, this.settings);
    const wb = this.store.batch();
    await update.write(wb);
    await wb.commit();
    update.publish();
    for (const c of list) {
      if (c.after) this.docs.set(c.docid, c.after);
      else this.docs.delete(c.docid);
    }
  }

  /** Every document gone, then `docs` added, in one batch (what clearing an index then adding does). */
  async reset(docs: Record<number, Doc>): Promise<void> {
    const list: DocChange[] = Object.entries(docs).map(([k, after]) => ({ docid: Number(k), before: null, after }));
    const update = await this.index.prepare(list, this.settings, { reset: true });
    const wb = this.store.batch();
    await update.write(wb);
    await wb.commit();
    update.publish();
    this.docs = new Map(Object.entries(docs).map(([k, d]) => [Number(k), d]));
  }

  async add(docs: Doc[], from = this.docs.size): Promise<void> {
    await this.apply(Object.fromEntries(docs.map((d, i) => [from + i, d])));
  }

  async changeSettings(patch: Partial<IndexSettings>): Promise<void> {
    this.settings = { ...this.settings, ...patch };
    const docs = [...this.docs.entries()].sort((a, b) => a[0] - b[0]);
    const update = await this.index.rebuild(async function* () {
      yield* docs;
    }, this.settings);
    const wb = this.store.batch();
    await update.write(wb);
    await wb.commit();
    update.publish();
  }

  /** Opens the persisted index again, as a restart would. */
  async reopen(): Promise<void> {
    this.index = await FacetIndex.open({ store: this.store, space: new KeySpace('f'), settings: this.settings, embeddings: directSource, embedderEnv: embedderEnvironment() });
  }

  /** Docids a filter selects (sorted). */
  filter(f: unknown): number[] {
    const node = parseFilter(f, { code: 'invalid_search_filter', containsFilter: true });
    if (!node) return [...this.index.state.all];
    return [...new FilterEvaluator(this.index.state, this.settings.filterableAttributes).evaluate(node)];
  }

  filterError(f: unknown): string {
    try {
      this.filter(f);
    } catch (e) {
      if (e instanceof FilterError || e instanceof Error) return e.message;
    }
    throw new Error(`filter ${JSON.stringify(f)} was accepted`);
  }

  async close(): Promise<void> {
    await this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
