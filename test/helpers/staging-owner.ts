/**
 * Another process staging into a folder (src/store/blobs/staging.ts): it stages one body that
 * never ends and prints `staging <part>` once its part is on disk, then waits to be killed. For
 * tests of the staging sweep across processes: a live owner while it runs, a dead one after
 * SIGKILL (what a killed instance leaves). Run by `spawnStagingOwner`, which stops only its child.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { BlobStaging } from '../../src/store/blobs/staging.js';

const HERE = fileURLToPath(import.meta.url);
const REPO_ROOT = path.resolve(path.dirname(HERE), '../..');

export interface StagingOwner {
  child: ChildProcess;
  /** The part it is writing (full path). */
  part: string;
  /** The lock file of its ownership (full path). */
  ownerFile: string;
  /** SIGKILL, resolved once it exited. */
  kill(): Promise<void>;
}

/** Starts a process staging into `folder`; resolves once its part is on disk (within 30 s). */
export async function spawnStagingOwner(folder: string): Promise<StagingOwner> {
  const child = spawn(process.execPath, ['--import', 'tsx', HERE, folder], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const match = /^staging (\S+)$/m.exec(output);
    if (match) {
      const part = match[1] as string;
      const ownerFile = path.join(folder, `${path.basename(part).split('.')[0] as string}.owner`);
      return { child, part, ownerFile, kill };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      await kill();
      throw new Error(`the staging process did not stage: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function main(folder: string): Promise<void> {
  const staging = new BlobStaging(folder);
  await staging.init();
  // Past the inline limit, so the body spills into a part; then nothing more, ever.
  const body = new Readable({ read() {} });
  body.push(Buffer.alloc(256 * 1024, 7));
  void staging.stage(body);
  const mine = `${process.pid}-`;
  for (;;) {
    const part = readdirSync(folder).find((name) => name.startsWith(mine) && name.endsWith('.part'));
    if (part) {
      process.stdout.write(`staging ${path.join(folder, part)}\n`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  setInterval(() => undefined, 60_000);
}

if (process.argv[1] === HERE) await main(process.argv[2] as string);
