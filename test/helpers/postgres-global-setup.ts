/**
 * vitest globalSetup of the integration projects: one throwaway PostgreSQL cluster for the
 * whole run (about a second to start), handed to the workers with provide('drivewayPostgres'),
 * so a test file pays only for its databases (tens of milliseconds) and not for a cluster of its
 * own; vitest runs each file in a fresh process, so a per-process cluster would be one per file.
 * Not installed: provides null, and requirePostgres() in the files skips or fails them.
 */
import type { TestProject } from 'vitest/node';
import { requirePostgres, startPostgres } from './postgres.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Missing is each file's to report (skip loudly, or fail under CI), not the whole run's.
  if (!requirePostgres({ env: { ...process.env, CI: undefined }, warn: () => undefined }).isAvailable) {
    project.provide('drivewayPostgres', null);
    return async () => undefined;
  }
  const cluster = await startPostgres({ maxConnections: 200 });
  project.provide('drivewayPostgres', { url: cluster.url, adminUrl: cluster.adminUrl, port: cluster.port, major: cluster.major });
  return () => cluster.stop();
}
