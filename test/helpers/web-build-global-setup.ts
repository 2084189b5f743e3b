/**
 * Builds the web app (vite.web.config.ts) once for the `web` project's run, into a temp folder
 * the suites give the store as `store.webDir` (never the checkout's dist/web, which `npm start`
 * owns), and removes it afterwards. The suites read the folder with inject('webDir').
 */
import path from 'node:path';
import { build } from 'vite';
import type { TestProject } from 'vitest/node';
import { makeTmpDir } from './tmp-dir.js';

declare module 'vitest' {
  export interface ProvidedContext {
    webDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const tmp = makeTmpDir('driveway-web-build-');
  await build({ configFile: path.resolve(import.meta.dirname, '../../vite.web.config.ts'), logLevel: 'error', build: { outDir: tmp.dir, emptyOutDir: true } });
  project.provide('webDir', tmp.dir);
  return () => tmp.remove();
}
