export * from './kv.js';
export * from './keys.js';
export { RocksStore } from './rocks-store.js';
