/**
 * The child process test/helpers/s3-server.ts runs s3rver in:
 *   node --openssl-legacy-provider s3rver-process.ts <folder> <port, 0: any> <bucket>
 * It prints one line, {"port":N}, once it listens on 127.0.0.1, and serves until SIGTERM (the
 * folder is kept: the server may be started again on it) or until its stdin ends (the test
 * process that started it is gone, often without running its exit handlers: the folder goes too).
 *
 * Why a process of its own: s3rver 3.7 encrypts ListObjectsV2 continuation tokens with DES,
 * which OpenSSL 3 (Node 17 and later) has only in its legacy provider; without it every
 * truncated listing (more than 1,000 keys, or MaxKeys) answers 500 InternalError. The flag is
 * the process's, so it is set here and not in the process under test. Runs as TypeScript
 * without tsx where Node strips types itself (22.18 and later), so it imports only s3rver and
 * Node's own modules.
 */
import { rmSync } from 'node:fs';
import S3rver from 's3rver';

const [directory, port, bucket] = process.argv.slice(2);
if (directory === undefined || port === undefined || bucket === undefined) {
  process.stderr.write('usage: s3rver-process.ts <folder> <port> <bucket>\n');
  process.exit(2);
}

const server = new S3rver({ address: '127.0.0.1', port: Number(port), silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
const listening = await server.run();
process.stdout.write(`${JSON.stringify({ port: listening.port })}\n`);

let stopping = false;
const stop = (removeFolder: boolean): void => {
  if (stopping) return;
  stopping = true;
  const exit = (code: number): void => {
    if (removeFolder) rmSync(directory, { recursive: true, force: true });
    process.exit(code);
  };
  // Idle keep-alive connections close at once; a request under way may finish, for 2 s at most.
  setTimeout(() => exit(0), 2_000).unref();
  server.close().then(
    () => exit(0),
    () => exit(1),
  );
};
process.once('SIGTERM', () => stop(false));
process.stdin.once('end', () => stop(true));
process.stdin.resume();
