/**
 * A real S3-speaking server on loopback for a suite: s3rver (S3's REST API in Node, files in a
 * temp folder), on 127.0.0.1 with an OS-chosen port, one bucket made. Our code talks HTTP S3 to
 * it through @aws-sdk/client-s3. s3rver lacks AbortMultipartUpload (405), ListMultipartUploads,
 * suffix ranges and continuation-token paging on Node 20; the backend avoids or tolerates those.
 *
 * A suite that needs a server of its own (to stop it: S3 down) calls startS3Server(); the rest
 * share one per worker process and take a bucket each: `const { endpoint, bucket } = await freshS3Bucket()`.
 */
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { makeTmpDir } from './tmp-dir.js';

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
  /** Removes its folder synchronously, for a process 'exit' handler (the server dies with the process). */
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

export async function startS3Server(bucket = 'driveway-test'): Promise<TestS3Server> {
  const tmp = makeTmpDir('driveway-s3rver-');
  const make = (port: number) => new S3rver({ address: '127.0.0.1', port, silent: true, directory: tmp.dir, configureBuckets: [{ name: bucket, configs: [] }] });
  let server: S3rver | undefined = make(0);
  const { port } = (await server.run()) as { port: number };
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
    removeFolder: () => tmp.remove(),
    async stopServer() {
      await server?.close();
      server = undefined;
    },
    async startServer() {
      if (server) return;
      const next = make(port);
      await next.run();
      server = next;
    },
    close: async () => {
      client?.destroy();
      await server?.close();
      server = undefined;
      tmp.remove();
    },
  };
}

let shared: Promise<TestS3Server> | undefined;

/**
 * This worker process's s3rver, started on first call, shared by its suites (one bucket each);
 * it lives in this process, so it ends with it, and its folder is removed at exit. A suite must
 * not close it.
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
