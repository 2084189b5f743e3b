/**
 * Builds the web app (src/web) into dist/web: index.html and hashed assets under app/assets/,
 * which the store serves (src/store/web-app.ts). `npm run build` runs it after tsc; JSX is
 * Preact's (automatic runtime), no plugin needed. Not named vite.config.ts: vitest would read it.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: path.join(root, 'src/web'),
  base: '/',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.join(root, 'dist/web'),
    emptyOutDir: true,
    assetsDir: 'app/assets',
    // Nothing inline: the page's policy allows script and style from the origin only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
});
