// @ts-check
/**
 * Which Node.js driveway runs on, asked before anything else loads: by scripts/build-if-stale.mjs
 * (the first step of `npm start`, before anything is built) and by main.ts (the first lines of
 * `node dist/main.js` and of the `driveway` bin). On another line the answer is one line naming
 * the Node.js needed and the one running, instead of what would follow: better-sqlite3 13 ends
 * Node.js 20 with a segmentation fault, not an error. `npm ci` refuses there too (`.npmrc`:
 * engine-strict, against package.json `engines`, which ENGINES must equal: a test says so).
 *
 * Plain JavaScript importing nothing, so the script can run it from src/ on whatever Node.js
 * started it; tsc checks it (@ts-check) and copies it into dist/ for main.js.
 */

/** package.json `engines.node`: the two LTS lines, 22 from 22.12 and 24 on. */
export const ENGINES = '^22.12.0 || >=24.0.0';

/**
 * The line to print when Node.js `version` (process.versions.node, `20.19.2`, with or without a
 * leading `v`) is not one driveway runs on; undefined when it is.
 * @param {string} version
 * @returns {string | undefined}
 */
export function nodeVersionProblem(version) {
  const match = /^v?(\d+)\.(\d+)\.\d+/.exec(version);
  const major = Number(match?.[1]);
  const minor = Number(match?.[2]);
  if (major >= 24 || (major === 22 && minor >= 12)) return undefined;
  const running = match ? `Node.js ${version.replace(/^v/, '')}` : `a Node.js that reports version "${version}"`;
  return `driveway needs Node.js 22 (22.12 or newer) or 24 or newer (${ENGINES}); this is ${running}. Install Node.js 24, then run npm ci again.`;
}
