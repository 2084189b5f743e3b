/**
 * Two driveway processes over one PostgreSQL database and one S3 bucket (both real, started for
 * the suite), for the fault suites that start an upload through one instance and finish it
 * through the other. Registers its beforeAll/afterAll in the calling describe; the returned
 * object is filled in beforeAll.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
import { spawnDriveway, type DrivewayProcess } from './driveway-process.js';
import { startPostgres, type TestPostgres } from './postgres.js';
import { postgresS3Env, s3rverClient, startS3Server, type TestS3Server } from './s3-server.js';
import { makeTmpDir } from './tmp-dir.js';

export interface TwoInstances {
  a: DrivewayProcess;
  b: DrivewayProcess;
  tmp: ReturnType<typeof makeTmpDir>;
  /** The keys under the bucket's `uploads/` (the parts of uploads not yet assembled). */
  uploadKeys(): Promise<string[]>;
  /** The keys under `<folder>/` of the bucket. */
  keys(folder: string): Promise<string[]>;
  /** The database both instances use. */
  databaseUrl: string;
}

/** `configYaml`: a configuration file both instances read (settings without an environment name). */
export function twoInstancesOverPostgresS3(tmpPrefix: string, configYaml?: string): TwoInstances {
  let cluster: TestPostgres | undefined;
  let s3: TestS3Server | undefined;
  const pair = {
    uploadKeys(): Promise<string[]> {
      return pair.keys('uploads');
    },
    async keys(folder: string): Promise<string[]> {
      const client = s3rverClient((s3 as TestS3Server).endpoint);
      try {
        const listed = await client.send(new ListObjectsV2Command({ Bucket: (s3 as TestS3Server).bucket, Prefix: `${folder}/` }));
        return (listed.Contents ?? []).map((o) => o.Key as string);
      } finally {
        client.destroy();
      }
    },
  } as TwoInstances;

  beforeAll(async () => {
    [cluster, s3] = await Promise.all([startPostgres(), startS3Server()]);
    pair.databaseUrl = await cluster.createDatabase();
    const env = { DRIVEWAY_LOG_LEVEL: 'warn', ...postgresS3Env(pair.databaseUrl, s3) };
    pair.tmp = makeTmpDir(tmpPrefix);
    let args: string[] = [];
    if (configYaml !== undefined) {
      const file = path.join(pair.tmp.dir, 'driveway.yaml');
      writeFileSync(file, configYaml);
      args = ['--config', file];
    }
    pair.a = await spawnDriveway({ dataDir: path.join(pair.tmp.dir, 'a'), env, args });
    pair.b = await spawnDriveway({ dataDir: path.join(pair.tmp.dir, 'b'), env, args });
  }, 90_000);

  afterAll(async () => {
    pair.a?.kill();
    pair.b?.kill();
    await Promise.allSettled([cluster?.stop(), s3?.close()]);
    pair.tmp?.remove();
  });

  return pair;
}
