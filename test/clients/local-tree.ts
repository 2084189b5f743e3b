/**
 * Local trees for the client suites: a tree of awkward names (docs/client-quirks.md §3 and issue 3:
 * space # % + ? & ; emoji, NFC and NFD, and a few more shell- and URL-hostile ones) written with
 * random bytes, and the sha256 of every file below a folder, computed by a child process (a suite
 * may hash a mounted folder, which its own event loop must never touch).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describeRun, runProgram } from './run-program.js';

export const AWKWARD = [
  'sp ace',
  'hash#tag',
  'per%cent',
  'per%20cent',
  'plus+sign',
  'question?mark',
  'amp&ersand',
  'semi;colon',
  'emoji 😀',
  'café-nfc'.normalize('NFC'),
  'naïve-nfd'.normalize('NFD'),
  "quote'single",
  'brackets[1]',
  'equals=sign,comma',
  '中文 名字',
  'tilde~at@',
];

/**
 * Writes `folders` x `filesPerFolder` files of awkward names below `root` (one empty file, the
 * others 1 byte to ~20 KB of random bytes); returns their relative paths.
 */
export function writeAwkwardTree(root: string, folders: number, filesPerFolder: number): string[] {
  const names: string[] = [];
  let n = 0;
  for (let folder = 0; folder < folders; folder += 1) {
    const folderName = `dir ${folder} ${AWKWARD[folder % AWKWARD.length]}`;
    mkdirSync(path.join(root, folderName), { recursive: true });
    for (let file = 0; file < filesPerFolder; file += 1) {
      const name = `${AWKWARD[(folder + file) % AWKWARD.length]} ${folder}-${file}.txt`;
      const size = n === 0 ? 0 : 1 + ((n * 7_919) % 20_000);
      writeFileSync(path.join(root, folderName, name), randomBytes(size));
      names.push(`${folderName}/${name}`);
      n += 1;
    }
  }
  return names;
}

/** `relative path -> sha256` of every file below `dir` (lost+found left out), keys in NFC as the store keeps names. */
export async function sha256Tree(dir: string, timeoutMs = 120_000): Promise<Map<string, string>> {
  const run = await runProgram('sh', ['-c', 'cd "$1" && find . -type f -not -path "./lost+found/*" -print0 | xargs -0 -r sha256sum -z', 'sh', dir], { timeoutMs });
  if (run.code !== 0) throw new Error(`hashing ${dir} failed\n${describeRun(run)}`);
  const out = new Map<string, string>();
  for (const record of run.stdout.split('\0')) {
    const match = /^([0-9a-f]{64}) [ *](.*)$/s.exec(record);
    if (match) out.set((match[2] ?? '').replace(/^\.\//, '').normalize('NFC'), match[1] ?? '');
  }
  return out;
}
