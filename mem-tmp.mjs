import { MetadataCache } from './dist/bridge/metadata-cache.js';
const cache = new MetadataCache({ ttlMs: 600000, maxEntries: 100000 });
global.gc(); const before = process.memoryUsage().heapUsed;
const N = 20, M = 10000;
for (let f = 0; f < N; f++) {
  const entries = [];
  for (let i = 0; i < M; i++) entries.push({ id: crypto.randomUUID(), name: `file-${f}-${i}-some-typical-name.txt`, kind: 'file', sizeBytes: 4096 + i, updatedMs: Date.now(), revision: 1, isStarred: false });
  cache.remember("u", `f${f}`, entries);
}
global.gc(); const after = process.memoryUsage().heapUsed;
console.log('bytes per cached entry', ((after - before) / (N * M)).toFixed(0));
