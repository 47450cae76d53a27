// Foreign keys (experimental): a field of an index holds ids of documents of another index;
// search hits and fetched documents show, in place of each id, that document as its own
// index displays it. An id that matches no document becomes `{}`; a value that cannot be a
// document id stays as it is. The other index must exist.

import type { Engine } from '../engine.js';
import type { IndexSettings } from '../settings/settings.js';
import { normalizeDocumentId, type Doc } from './primary-key.js';
import { projectFields } from './project.js';

type Json = unknown;

function asId(v: Json): string | null {
  if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'bigint') return null;
  try {
    return normalizeDocumentId(v);
  } catch {
    return null;
  }
}

/** Calls `visit` on every id-like value found at `path` (dots go into objects and arrays of objects). */
function atPath(value: Json, path: string, visit: (v: Json, set: (x: Json) => void) => void): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) atPath(item, path, visit);
    return;
  }
  const obj = value as Record<string, Json>;
  if (path in obj) {
    const leaf = (v: Json, set: (x: Json) => void): void => {
      if (Array.isArray(v)) v.forEach((x, i) => leaf(x, (y) => (v[i] = y)));
      else visit(v, set);
    };
    leaf(obj[path], (x) => (obj[path] = x));
  }
  for (let dot = path.indexOf('.'); dot > 0; dot = path.indexOf('.', dot + 1)) {
    const head = path.slice(0, dot);
    if (head in obj) atPath(obj[head], path.slice(dot + 1), visit);
  }
}

/** Puts the referenced documents in place of their ids in `docs` (and their `_formatted`), in place. */
export async function hydrateForeignKeys(engine: Engine, settings: IndexSettings, docs: Doc[]): Promise<void> {
  const keys = settings.foreignKeys;
  if (keys.length === 0 || docs.length === 0) return;
  const targets = (d: Doc): Json[] => (d['_formatted'] && typeof d['_formatted'] === 'object' ? [d, d['_formatted']] : [d]);
  for (const uid of new Set(keys.map((k) => k.foreignIndexUid))) {
    const fields = keys.filter((k) => k.foreignIndexUid === uid).map((k) => k.fieldName);
    const h = engine.getIndex(uid);
    const ids = new Set<string>();
    for (const d of docs) for (const t of targets(d)) for (const f of fields) atPath(t, f, (v) => void (asId(v) !== null && ids.add(asId(v)!)));
    if (ids.size === 0) continue;
    const existing = [...ids].filter((id) => h.ext.has(id));
    const found = await engine.readDocs(engine.store, h, existing.map((id) => h.ext.get(id)!));
    const byId = new Map<string, Doc>([...ids].map((id) => [id, {}]));
    existing.forEach((id, i) => {
      const doc = found[i];
      if (!doc) return;
      const shown = { ...projectFields(doc, h.meta.settings.displayedAttributes) };
      delete shown['_vectors'];
      byId.set(id, shown);
    });
    for (const d of docs) {
      for (const t of targets(d)) {
        for (const f of fields) {
          atPath(t, f, (v, set) => {
            const id = asId(v);
            if (id !== null) set(structuredClone(byId.get(id)!));
          });
        }
      }
    }
  }
}
