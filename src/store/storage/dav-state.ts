/**
 * Where the bridge's shared state lives, chosen once at start (run.ts, and the test helpers that
 * start a bridge): the BridgeState (contracts/bridge-state.ts) the bridge is handed, both of its
 * implementations. Owns the bridge's own SQLite file and its upgrades; the SQL of the tables is
 * dav-locks.ts's, dav-properties.ts's and renamed-away.ts's.
 *
 * - Beside the embedded store (`npm start`), in the store's database: dead properties, client
 *   mtimes and the rename-away memos always; locks only over PostgreSQL, where instances share them. Over SQLite one
 *   process serves the data directory (instance-lock.ts), so the locks stay in the
 *   bridge's memory as they always were: a PROPFIND then reads them from a Map, not with a
 *   statement per request. A `bridge.sqlite` left by an earlier release is moved in once.
 * - In front of another server (`--only bridge`, or a configured store URL), in the bridge's own
 *   `<dataDir>/bridge.sqlite`, opened through the SQLite dialect; locks in memory.
 */
import { existsSync, renameSync } from 'node:fs';
import path from 'node:path';
import type { BridgeState } from '../../contracts/bridge-state.js';
import type { DeadPropertyStoreOptions } from '../../contracts/dav-properties.js';
import type { Logger } from '../../common/logger.js';
import { makePrivateDirSync } from '../../common/private-files.js';
import { SqlLockRepository } from './dav-locks.js';
import { SqlPropertyRepository } from './dav-properties.js';
import { SqlUploadSessionRepository } from './upload-sessions.js';
import { SqlLoginFlowRepository } from './login-flows.js';
import { SqlPushTokenRepository } from './push-tokens.js';
import { openConnection, type Db } from './dialects/sqlite-open.js';
import { SqliteStorage } from './dialects/sqlite.js';
import { migrationsOf } from './migrations.js';
import { SqlRenameAwayRepository } from './renamed-away.js';
import { SqlFileIdRepository } from './dav-file-ids.js';
import type { Sql, Storage } from './sql.js';

export interface DavStateOptions {
  /** The embedded store's storage, when the bridge serves it in-process; otherwise the bridge's own file. */
  storage?: Storage | undefined;
  /** The bridge's own file (`<dataDir>/bridge.sqlite`): used without `storage`, moved into it with. */
  stateFile: string;
  properties?: DeadPropertyStoreOptions;
  log?: Logger;
}

/** The dead property limits of the configuration (`bridge.deadPropsMaxBytesPerNode`, `...PerOwner`). */
export function propertyLimitsOf(bridge: { deadPropsMaxBytesPerNode: number; deadPropsMaxBytesPerOwner: number }): DeadPropertyStoreOptions {
  return { maxBytesPerNode: bridge.deadPropsMaxBytesPerNode, maxBytesPerOwner: bridge.deadPropsMaxBytesPerOwner };
}

export async function openDavState(options: DavStateOptions): Promise<BridgeState> {
  const { storage } = options;
  if (storage) {
    const moved = await moveStateFileInto(options.stateFile, storage.sql);
    if (moved) options.log?.info({ ...moved, from: options.stateFile }, 'moved dead properties and client mtimes from the bridge state file into the database');
    return {
      locks: storage.dialect === 'postgres' ? new SqlLockRepository(storage.sql, {}, storage.changes) : undefined,
      properties: new SqlPropertyRepository(storage.sql, options.properties),
      renamedAway: new SqlRenameAwayRepository(storage.sql),
      uploads: new SqlUploadSessionRepository(storage.sql),
      fileIds: new SqlFileIdRepository(storage.sql),
      loginFlows: new SqlLoginFlowRepository(storage.sql),
      pushTokens: new SqlPushTokenRepository(storage.sql),
      // The storage is the store's: it closes it.
      close: async () => undefined,
    };
  }
  makePrivateDirSync(path.dirname(options.stateFile));
  const file = openBridgeStateFile(options.stateFile);
  return {
    locks: undefined,
    properties: new SqlPropertyRepository(file.sql, options.properties),
    renamedAway: new SqlRenameAwayRepository(file.sql),
    uploads: new SqlUploadSessionRepository(file.sql),
    fileIds: new SqlFileIdRepository(file.sql),
    loginFlows: new SqlLoginFlowRepository(file.sql),
    pushTokens: new SqlPushTokenRepository(file.sql),
    probe: async () => void (await file.sql.get('SELECT 1 AS ok')),
    close: () => file.close(),
  };
}

// ---------------------------------------------------------------------------------------------
// The bridge's own file, for a bridge with no shared storage (`--only bridge`).

/**
 * user_version of bridge.sqlite. 1 and 2 are the layouts of earlier releases (tables
 * dead_properties, client_mtimes and, from 2, dead_property_usage); 3 holds the tables of the
 * storage layer's migration 012, the same as the store's database, so one repository serves both;
 * 4 adds migration 020's (the rename-away memos), 5 migration 021's (the upload sessions), 6
 * migration 024's (their quota reservations), 7 migration 027's (the bridge's numeric file ids
 * and instance names), 8 migration 028's (the client login flows), 9 migration 036's (the push door's pre-auth tokens). A later migration that changes
 * these tables must add a step here too.
 */
export const STATE_FILE_VERSION = 9;
const STATE_MIGRATIONS = [
  { fileVersion: 3, migration: 12 },
  { fileVersion: 4, migration: 20 },
  { fileVersion: 5, migration: 21 },
  { fileVersion: 6, migration: 24 },
  { fileVersion: 7, migration: 27 },
  { fileVersion: 8, migration: 28 },
  { fileVersion: 9, migration: 36 },
] as const;

/** Opens (creating or upgrading) a bridge state file as a SqliteStorage; `:memory:` works for tests. */
export function openBridgeStateFile(file: string): SqliteStorage {
  return new SqliteStorage(openConnection(file, upgradeStateFile, { foreignKeys: false, statementCacheLimit: 500 }));
}

function upgradeStateFile(db: Db): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > STATE_FILE_VERSION) {
    throw new Error(`dead property file has schema ${version}, newer than this bridge (${STATE_FILE_VERSION})`);
  }
  if (version === STATE_FILE_VERSION) return;
  const migrations = migrationsOf('sqlite');
  db.transaction(() => {
    for (const step of STATE_MIGRATIONS) {
      if (version >= step.fileVersion) continue;
      const migration = migrations.find((m) => m.version === step.migration);
      if (!migration) throw new Error(`storage migration ${step.migration} is missing`);
      db.exec(migration.sql);
      if (step.migration === 12 && version >= 1) {
        // Earlier releases: rows move into the new tables (the triggers charge each to its owner;
        // version 1 had no owners, so its rows are charged to nobody until their node is patched).
        db.exec(`INSERT INTO dav_properties (node_id, ns, local, xml, owner)
                   SELECT node_id, ns, local, xml, ${version >= 2 ? 'owner' : "''"} FROM dead_properties;
                 INSERT INTO dav_client_mtimes (node_id, mtime_ms) SELECT node_id, mtime_ms FROM client_mtimes;
                 DROP TABLE dead_properties;
                 DROP TABLE client_mtimes;
                 ${version >= 2 ? 'DROP TABLE dead_property_usage;' : ''}`);
      }
    }
    db.pragma(`user_version = ${STATE_FILE_VERSION}`);
  })();
}

/**
 * Moves what a bridge state file holds (dead properties, client mtimes) into the shared tables
 * of `target`, the first time an in-process bridge starts over a data directory whose earlier
 * release kept them in `<dataDir>/bridge.sqlite`: in one transaction, rows already in `target`
 * kept, then the file renamed to `bridge.sqlite.moved` so it is never read again. Returns how
 * many rows were moved, or undefined when there was no file.
 */
export async function moveStateFileInto(file: string, target: Sql): Promise<{ properties: number; mtimes: number } | undefined> {
  if (!existsSync(file)) return undefined;
  const local = openBridgeStateFile(file);
  let moved: { properties: number; mtimes: number };
  try {
    const props = await local.sql.all<{ node_id: string; ns: string; local: string; xml: string; owner: string }>(
      'SELECT node_id, ns, local, xml, owner FROM dav_properties',
    );
    const mtimes = await local.sql.all<{ node_id: string; mtime_ms: number }>('SELECT node_id, mtime_ms FROM dav_client_mtimes');
    moved = await target.transaction(async (tx) => {
      let properties = 0;
      let times = 0;
      for (let i = 0; i < props.length; i += ROWS_PER_INSERT) {
        const chunk = props.slice(i, i + ROWS_PER_INSERT);
        properties += (
          await tx.run(
            `INSERT INTO dav_properties (node_id, ns, local, xml, owner) VALUES ${chunk.map(() => '(?, ?, ?, ?, ?)').join(', ')} ON CONFLICT DO NOTHING`,
            chunk.flatMap((r) => [r.node_id, r.ns, r.local, r.xml, r.owner]),
          )
        ).changes;
      }
      for (let i = 0; i < mtimes.length; i += ROWS_PER_INSERT) {
        const chunk = mtimes.slice(i, i + ROWS_PER_INSERT);
        times += (
          await tx.run(
            `INSERT INTO dav_client_mtimes (node_id, mtime_ms) VALUES ${chunk.map(() => '(?, ?)').join(', ')} ON CONFLICT DO NOTHING`,
            chunk.flatMap((r) => [r.node_id, r.mtime_ms]),
          )
        ).changes;
      }
      return { properties, mtimes: times };
    });
  } finally {
    await local.close();
  }
  renameSync(file, `${file}.moved`);
  return moved;
}

/** Rows per multi-row INSERT when moving a state file: 100 × 5 parameters, far below both dialects' limits. */
const ROWS_PER_INSERT = 100;
