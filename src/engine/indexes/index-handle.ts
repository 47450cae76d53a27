import { KeySpace } from '../../store/keys.js';
import type { SearchIndex } from '../structures/search-index.js';
import type { IndexSettings } from '../settings/settings.js';
import { ExternalIdMap } from './external-id-map.js';

/** What is persisted about an index besides its documents and search structures. */
export interface IndexMeta {
  id: number;
  uid: string;
  primaryKey: string | null;
  createdAt: number;
  updatedAt: number;
  nextDocid: number;
  docCount: number;
  /** Sum of the stored documents' sizes in bytes. */
  rawDocumentBytes: number;
  fieldDistribution: Record<string, number>;
  settings: IndexSettings;
  /**
   * Some document stored here holds an integer past 2^53 (see document-json.ts): documents are
   * read with their big integers. Absent, they are plain JSON, read without looking for any.
   */
  exactIntegers?: true;
}

export const INDEXES = new KeySpace('ix');
export const INDEX_UIDS = new KeySpace('iu');

/** An open index: its metadata, id map and search structures, and where its keys live. */
export class IndexHandle {
  readonly space: KeySpace;
  readonly docs: KeySpace;
  readonly searchSpace: KeySpace;

  constructor(
    public meta: IndexMeta,
    /** External document id → internal docid. */
    public ext: ExternalIdMap,
    public search: SearchIndex,
  ) {
    this.space = INDEXES.child(String(meta.id));
    this.docs = IndexHandle.documentSpaceOf(meta.id);
    this.searchSpace = IndexHandle.searchSpaceOf(meta.id);
  }

  static documentSpaceOf(id: number): KeySpace {
    return INDEXES.child(String(id)).child('d');
  }

  static searchSpaceOf(id: number): KeySpace {
    return INDEXES.child(String(id)).child('s');
  }

  get uid(): string {
    return this.meta.uid;
  }

  metaKey(): Buffer {
    return this.space.key('meta');
  }

  docKey(docid: number): Buffer {
    return this.docs.key(docid);
  }
}
