/**
 * What the bridge keeps beside the files, and is handed by whoever starts it (main.ts, the test
 * helpers): its locks, dead properties, rename-away memos, upload sessions,
 * client login flows and push pre-auth tokens. Two implementations,
 * both opened by store/storage/dav-state.ts: the store's database when the bridge serves the store
 * in-process (SQLite or PostgreSQL), else the bridge's own `<dataDir>/bridge.sqlite`. The bridge
 * holds no SQL and opens no database itself; it closes what it is handed when it closes.
 */
import type { LockRepository } from './dav-locks.js';
import type { LoginFlowRepository } from './login-flows.js';
import type { PropertyRepository } from './dav-properties.js';
import type { PushTokenRepository } from './push-tokens.js';
import type { FileIdRepository } from './file-ids.js';
import type { RenameAwayRepository } from './renamed-away.js';
import type { UploadSessionRepository } from './upload-sessions.js';

export interface BridgeState {
  /** Locks shared with other instances; undefined keeps them in the bridge's memory. */
  readonly locks: LockRepository | undefined;
  readonly properties: PropertyRepository;
  /** Saves by rename-away: what an earlier request of the dance did (any instance's). */
  readonly renamedAway: RenameAwayRepository;
  /** Resumable-upload sessions (bridge/uploads/), where every instance over the store sees them. */
  readonly uploads: UploadSessionRepository;
  /** Numeric file ids for what the store numbers not (made-up collections; a store without `file_id`), and the instance's names. */
  readonly fileIds: FileIdRepository;
  /** The Nextcloud clients' login flows (bridge/nextcloud/login-flow.ts), where every instance sees them. */
  readonly loginFlows: LoginFlowRepository;
  /** The push door's pre-auth tokens (bridge/nextcloud/push.ts), where every instance sees them. */
  readonly pushTokens: PushTokenRepository;
  /** For /readyz: resolves when the bridge's own state file answers; absent when the state is the store's (its checks cover it). */
  probe?(): Promise<void>;
  close(): Promise<void>;
}
