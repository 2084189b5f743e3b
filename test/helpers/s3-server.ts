/**
 * A real S3-speaking server on loopback for a suite: s3rver (S3's REST API in Node, files in a
 * temp folder), on 127.0.0.1 with an OS-chosen port, one bucket made. Our code talks HTTP S3 to
 * it through @aws-sdk/client-s3. s3rver lacks AbortMultipartUpload (405), ListMultipartUploads,
 * suffix ranges and continuation-token paging on Node 20; the backend avoids or tolerates those.
 */
import S3rver from 's3rver';
import { makeTmpDir } from './tmp-dir.js';

/** s3rver's built-in account: what the SDK must sign with. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface TestS3Server {
  endpoint: string;
  bucket: string;
  close(): Promise<void>;
}

export async function startS3Server(bucket = 'driveway-test'): Promise<TestS3Server> {
  const tmp = makeTmpDir('driveway-s3rver-');
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: tmp.dir, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = (await server.run()) as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    close: async () => {
      await server.close();
      tmp.remove();
    },
  };
}
