import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * `npm test` runs every project. The bridge reaches the store in-process by default (as `npm
 * start` runs it); the bridge suites run a second time with the bridge on the HTTP client
 * (`--only bridge` against any server of the interface), and litmus, which walks every DAV verb,
 * does too, so a difference between the two transports cannot hide.
 *
 * The integration projects start one throwaway PostgreSQL for the run (postgres-global-setup);
 * suites take a database each from it (test/helpers/postgres.ts, sharedPostgres).
 */
const postgresForTheRun = ['test/helpers/postgres-global-setup.ts'];
/**
 * Files side by side in the projects that allow it: at least two, so a 2-core machine (CI's) runs
 * two (vitest's default there is one: cores - 1). A file here mostly waits on sockets, disks and
 * timers, and starting one costs 1-2 s of imports, which a second worker overlaps. The projects
 * with `fileParallelism: false` (servers, browsers, mounts) still run one file at a time, after
 * the rest (vitest's sequential group).
 */
const workers = Math.max(2, availableParallelism() - 1);
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: workers,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'integration',
          globalSetup: postgresForTheRun,
          include: ['test/integration/**/*.test.ts', 'test/contract/**/*.test.ts', 'test/security/**/*.test.ts'],
          exclude: ['test/integration/faults/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration-http',
          globalSetup: postgresForTheRun,
          include: ['test/integration/bridge/**/*.test.ts'],
          env: { DRIVEWAY_TEST_TRANSPORT: 'http' },
        },
      },
      {
        // The store on PostgreSQL + S3 (start-store.ts: a fresh database of the run's cluster and
        // an s3rver bucket per store): every store suite but those testing a mechanism of one
        // configuration, which run in `integration` only: durability and group-commit (SQLite's
        // WAL, fsync and crash recovery, legacy SQLite schemas), migrate-embedded (its source is an
        // embedded SQLite store by nature), startup-postgres (starts its own PostgreSQL store
        // already), blob-backends (the backends against their own SQLite ledger, both backends).
        extends: true,
        test: {
          name: 'integration-pg',
          globalSetup: postgresForTheRun,
          include: ['test/contract/store-client.test.ts', 'test/integration/store/auth.test.ts', 'test/integration/store/web-session.test.ts', 'test/integration/store/nodes.test.ts', 'test/integration/store/share-links.test.ts', 'test/integration/store/trash.test.ts', 'test/integration/store/upload.test.ts', 'test/integration/store/access-policy.test.ts', 'test/integration/store/logging.test.ts', 'test/integration/store/users-directory.test.ts', 'test/integration/store/twofa.test.ts', 'test/integration/store/twofa-setup.test.ts', 'test/integration/store/notifications.test.ts', 'test/integration/store/user-notifications.test.ts', 'test/integration/store/login-history.test.ts', 'test/integration/store/password-expiry.test.ts', 'test/integration/store/resources.test.ts', 'test/integration/store/webdrive.test.ts', 'test/integration/store/user.test.ts', 'test/integration/store/app-passwords.test.ts', 'test/integration/store/broadcast.test.ts', 'test/integration/store/private-shares.test.ts', 'test/integration/store/group-permissions.test.ts', 'test/integration/store/isolation.test.ts', 'test/integration/store/share-deletion.test.ts', 'test/integration/store/approvals.test.ts', 'test/integration/store/group-nodes.test.ts', 'test/integration/store/share-copy.test.ts', 'test/integration/store/admin-delete.test.ts', 'test/integration/store/groups.test.ts', 'test/integration/store/admin-groups.test.ts', 'test/integration/store/admin-users.test.ts', 'test/integration/store/admin-user-records.test.ts', 'test/integration/store/organizations.test.ts', 'test/integration/store/edition.test.ts', 'test/integration/store/incoming-group.test.ts', 'test/integration/store/s3-blobs.test.ts', 'test/integration/store/concurrent-creates.test.ts', 'test/integration/store/retention.test.ts', 'test/integration/store/revision-from.test.ts', 'test/integration/store/checksum-backfill.test.ts', 'test/integration/store/restore.test.ts', 'test/integration/store/file-ids.test.ts', 'test/integration/store/tree-versions.test.ts', 'test/integration/store/search.test.ts', 'test/integration/store/link-pages.test.ts', 'test/integration/store/link-upload-doors.test.ts', 'test/integration/store/thumbnails.test.ts', 'test/security/reauth-bypass.test.ts'],
          env: { DRIVEWAY_TEST_STORAGE: 'postgres' },
        },
      },
      {
        // The bridge in-process (as npm start runs it) over a store on PostgreSQL + S3 (locks and
        // dead properties in SQL there): the verbs' suites and the security suites whose subject
        // is stored state. Left out, to keep CI's wall time (each runs in `integration`):
        // cache (the metadata cache's bounds; its cross-instance truth has its own suite),
        // parallel-guessing (the limiters, in-process until they move into the database),
        // slow-client and single-instance (sockets' timeouts and the data dir's PID lock: nothing
        // stored), fuzz, finder-replay and windows-replay (client replays of verbs covered here),
        // options, root, webdrive, sessions, login-history, failed-login-log, url-secret-logs
        // (authentication paths the store suites of integration-pg cover).
        extends: true,
        test: {
          name: 'integration-pg-bridge',
          globalSetup: postgresForTheRun,
          include: [
            ...['lock', 'proppatch', 'put', 'get', 'copy', 'move', 'propfind', 'delete', 'mkcol', 'isolation', 'groups', 'sharing', 'safe-save', 'checksums', 'mac-side-files', 'nextcloud-chunking', 'oc-chunked', 'sync-client-answers', 'tus', 'upload-quota', 'upload-groups', 'upload-locks', 'versions', 'trash-restore', 'nextcloud-restore', 'file-ids', 'tree-etags', 'login-flow', 'search', 'other-door-folders'].map((s) => `test/integration/bridge/${s}.test.ts`),
            ...['readonly-lock', 'refused-overwrite', 'concurrent-replace', 'dead-property-quota', 'share-escalation', 'app-password-members', 'derived-views', 'stored-script', 'nextcloud-doors'].map(
              (s) => `test/security/${s}.test.ts`,
            ),
          ],
          env: { DRIVEWAY_TEST_STORAGE: 'postgres', DRIVEWAY_TEST_TRANSPORT: 'local' },
        },
      },
      {
        // Real driveway processes over one PostgreSQL and one s3rver bucket, behind nginx
        // (test/multi-instance/): one file at a time, since each starts several servers.
        extends: true,
        test: { name: 'multi-instance', globalSetup: postgresForTheRun, include: ['test/multi-instance/**/*.test.ts'], fileParallelism: false, testTimeout: 120_000 },
      },
      {
        // Real driveway processes whose dependencies are stopped and started (their own
        // PostgreSQL cluster and s3rver), or which are stopped by a signal: one file at a time.
        extends: true,
        test: { name: 'faults', include: ['test/integration/faults/**/*.test.ts'], fileParallelism: false, testTimeout: 60_000 },
      },
      {
        // The web app in Debian's Chromium against a store serving it (test/web/), built once
        // for the run; one file at a time, since each starts a browser.
        extends: true,
        test: { name: 'web', globalSetup: ['test/helpers/web-build-global-setup.ts'], include: ['test/web/**/*.test.ts'], fileParallelism: false, testTimeout: 60_000 },
      },
      { extends: true, test: { name: 'clients', include: ['test/clients/**/*.test.ts'], fileParallelism: false, testTimeout: 300_000 } },
      {
        extends: true,
        test: {
          name: 'clients-http',
          include: ['test/clients/litmus.test.ts'],
          fileParallelism: false,
          testTimeout: 300_000,
          env: { DRIVEWAY_TEST_TRANSPORT: 'http' },
        },
      },
    ],
  },
});
