/**
 * A real S3-speaking server on loopback for a suite: s3rver (S3's REST API in Node, files in a
 * temp folder), on 127.0.0.1 with an OS-chosen port, one bucket made. Our code talks HTTP S3 to
 * it through @aws-sdk/client-s3. s3rver lacks AbortMultipartUpload (405), ListMultipartUploads
 * and suffix ranges; the backend avoids or tolerates those.
 *
 * s3rver runs in a child process of its own (s3rver-process.ts) under `--openssl-legacy-provider`:
 * its continuation tokens need DES, so without the flag every listing longer than a page answers
 * 500 on Node 17 and later. The flag stays out of the process under test, and the process under
 * test keeps its event loop to itself. The child ends with its parent (its stdin closes).
 * s3rver lists in the order of its folder walk: keys under one prefix come in byte order, but
 * across sibling folders where one name extends another (`paged/`, `paged-too/`) they do not,
 * and a listing paged across them skips keys. List under a prefix, as the backend does.
 *
 * A suite that needs a server of its own (to stop it: S3 down) calls startS3Server(); the rest
 * share one per worker process and take a bucket each: `const { endpoint, bucket } = await freshS3Bucket()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { makeTmpDir } from './tmp-dir.js';

const CHILD_ENTRY = path.join(path.dirname(fileURLToPath(import.meta.url)), 's3rver-process.ts');
const STARTUP_MS = 20_000;

/** s3rver's built-in account: what the SDK must sign with. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/**
 * The environment that puts a driveway process on PostgreSQL at `databaseUrl` and this s3rver
 * bucket, as an operator sets it (DRIVEWAY_DATABASE_URL, DRIVEWAY_S3_*, the SDK's AWS_* keys).
 */
export function postgresS3Env(databaseUrl: string, s3: { bucket: string; endpoint: string }): Record<string, string> {
  return {
    DRIVEWAY_DATABASE_URL: databaseUrl,
    DRIVEWAY_S3_BUCKET: s3.bucket,
    DRIVEWAY_S3_ENDPOINT: s3.endpoint,
    DRIVEWAY_S3_FORCE_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
  };
}

export interface TestS3Server {
  endpoint: string;
  /** The bucket made at start. */
  bucket: string;
  /** Makes another empty bucket through the S3 API (a unique name by default); its name. */
  createBucket(name?: string): Promise<string>;
  close(): Promise<void>;
  /** Stops serving, keeping the objects (connections are refused until startServer). */
  stopServer(): Promise<void>;
  /** Serves the same folder on the same port again. */
  startServer(): Promise<void>;
  /** Kills the server's process and removes its folder, synchronously: for a process 'exit' handler. */
  removeFolder(): void;
}

/** An SDK client for s3rver: path-style, its credentials, no checksum trailers (as the backend configures it). */
export function s3rverClient(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

let bucketCounter = 0;

/**
 * Starts s3rver-process.ts on `port` (0: any) serving `directory`; resolves with the child and
 * the port once it listens. Node strips the types itself where it can (22.18 and later), else tsx.
 */
async function spawnS3rver(directory: string, port: number, bucket: string): Promise<{ child: ChildProcess; port: number }> {
  const loader = process.features.typescript ? [] : ['--import', 'tsx'];
  const child = spawn(process.execPath, ['--openssl-legacy-provider', ...loader, CHILD_ENTRY, directory, String(port), bucket], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = once(child, 'exit');
  const deadline = Date.now() + STARTUP_MS;
  for (;;) {
    const line = /^(\{.*\})\n/.exec(stdout);
    if (line) {
      // Serving: it must not keep this process alive (suites never close the shared one).
      child.unref();
      for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
      return { child, port: (JSON.parse(line[1] as string) as { port: number }).port };
    }
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`s3rver exited before it listened (${child.exitCode ?? child.signalCode}): ${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`s3rver did not listen within ${STARTUP_MS} ms: ${stderr}`);
    }
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20))]);
  }
}

/** Ends the child by its PID (SIGTERM: it closes its server) and waits for it. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

export async function startS3Server(bucket = 'driveway-test'): Promise<TestS3Server> {
  const tmp = makeTmpDir('driveway-s3rver-');
  const first = await spawnS3rver(tmp.dir, 0, bucket).catch((err: unknown) => {
    tmp.remove();
    throw err;
  });
  let child: ChildProcess | undefined = first.child;
  const { port } = first;
  const endpoint = `http://127.0.0.1:${port}`;
  let client: S3Client | undefined;
  return {
    endpoint,
    bucket,
    async createBucket(name) {
      const made = name ?? `dw-${process.pid}-${++bucketCounter}-${randomBytes(3).toString('hex')}`;
      client ??= s3rverClient(endpoint);
      await client.send(new CreateBucketCommand({ Bucket: made }));
      return made;
    },
    removeFolder: () => {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      tmp.remove();
    },
    async stopServer() {
      const stopping = child;
      child = undefined;
      if (stopping) await stopChild(stopping);
    },
    async startServer() {
      if (child) return;
      child = (await spawnS3rver(tmp.dir, port, bucket)).child;
    },
    close: async () => {
      client?.destroy();
      const stopping = child;
      child = undefined;
      if (stopping) await stopChild(stopping);
      tmp.remove();
    },
  };
}

let shared: Promise<TestS3Server> | undefined;

/**
 * This worker process's s3rver, started on first call, shared by its suites (one bucket each);
 * its child process ends with this process, and its folder is removed at exit. A suite must not
 * close it.
 */
export function sharedS3Server(): Promise<TestS3Server> {
  if (!shared) {
    shared = startS3Server();
    shared.then(
      (server) => process.once('exit', () => server.removeFolder()),
      () => undefined,
    );
  }
  return shared;
}

/** A fresh bucket on this worker's shared s3rver: the usual way a suite gets S3. */
export async function freshS3Bucket(): Promise<{ endpoint: string; bucket: string }> {
  const server = await sharedS3Server();
  return { endpoint: server.endpoint, bucket: await server.createBucket() };
}
