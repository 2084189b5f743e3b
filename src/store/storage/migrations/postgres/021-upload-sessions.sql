-- Resumable uploads through the WebDAV bridge (src/bridge/uploads/; docs/bridge-design.md
-- "Uploads"): one row per upload session, one per part received. Kept in the database every
-- instance shares, so a chunk may arrive through any instance and a session outlives a restart;
-- the parts' bytes live in the bridge's PartStore, named by `part_key` under the session's `upload_key`.
-- A session belongs to `owner` (the store user id) alone; `name` is the client's folder name.
CREATE TABLE dav_uploads (
  upload_key   TEXT PRIMARY KEY,           -- random, names the session's parts in the PartStore
  owner        TEXT NOT NULL,
  name         TEXT NOT NULL,
  protocol     TEXT NOT NULL,              -- 'nextcloud-v1' or 'nextcloud-v2'
  destination  TEXT,                       -- the drive path (v2's Destination), NULL until known
  total_bytes  BIGINT,                     -- OC-Total-Length, NULL until sent
  created_ms   BIGINT NOT NULL,
  expires_ms   BIGINT NOT NULL,            -- moved on by every request of the session
  claimed_until BIGINT,                    -- an assembly under way holds the session until then (a lease it renews)
  UNIQUE (owner, name)
);
CREATE INDEX dav_uploads_expires ON dav_uploads(expires_ms);
-- A part re-sent under the same name replaces the earlier one (its row and its bytes).
CREATE TABLE dav_upload_parts (
  upload_key  TEXT NOT NULL,               -- removed with its session (no foreign key: bridge.sqlite runs without them)
  name        TEXT NOT NULL,               -- the chunk's name as sent
  seq         BIGINT NOT NULL,             -- the sort key: v1 start offset or chunk number
  start_byte  BIGINT,                      -- v1 `start-end` names: the offset the name claims
  size_bytes  BIGINT NOT NULL,
  part_key    TEXT NOT NULL,               -- the bytes' name in the PartStore
  PRIMARY KEY (upload_key, name)
);
