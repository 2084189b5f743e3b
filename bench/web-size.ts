/**
 * The web app's first-page weight (issue 24: under 150 KB of gzipped JavaScript and CSS): builds
 * src/web into a temp folder as `npm run build` does, reads the script and style sheets its
 * index.html loads (the entry, its module preloads, its CSS), gzips each at level 9 as the store
 * serves them (src/store/web-app.ts), and prints the sizes and the total against the budget
 * (`npx tsx bench/web-size.ts`). A figure, not a timed test; exits 1 over the budget.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

const BUDGET_BYTES = 150 * 1024;
const root = path.resolve(import.meta.dirname, '..');
const outDir = mkdtempSync(path.join(os.tmpdir(), 'driveway-web-size-'));
try {
  await build({ configFile: path.join(root, 'vite.web.config.ts'), logLevel: 'error', build: { outDir, emptyOutDir: true } });
  const html = readFileSync(path.join(outDir, 'index.html'), 'utf8');
  const loaded = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*\shref)="(\/app\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1] as string);
  let raw = 0;
  let gzipped = 0;
  for (const url of loaded) {
    const bytes = readFileSync(path.join(outDir, url));
    const zipped = gzipSync(bytes, { level: 9 }).length;
    raw += bytes.length;
    gzipped += zipped;
    console.log(`${url}  ${bytes.length} bytes, ${zipped} gzipped`);
  }
  const share = ((gzipped / BUDGET_BYTES) * 100).toFixed(1);
  console.log(`first page: ${loaded.length} files, ${raw} bytes, ${gzipped} bytes gzipped (${share}% of the ${BUDGET_BYTES}-byte budget)`);
  if (gzipped > BUDGET_BYTES) process.exitCode = 1;
} finally {
  rmSync(outDir, { recursive: true, force: true });
}
