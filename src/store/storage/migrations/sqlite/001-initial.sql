-- Users, sessions, nodes, revisions, blobs, stars, upload tokens, login history.
-- Times are epoch milliseconds. Booleans are 0/1.

CREATE TABLE users (
  uuid          TEXT PRIMARY KEY,
  username      TEXT NOT NULL UNIQUE COLLATE NOCASE,   -- email, or 'admin' for the built-in one
  email         TEXT NOT NULL,
  fullname      TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  is_active     INTEGER NOT NULL DEFAULT 1,
  is_admin      INTEGER NOT NULL DEFAULT 0,
  is_builtin    INTEGER NOT NULL DEFAULT 0,
  org_id        TEXT NOT NULL DEFAULT 'default',
  disk_quota    INTEGER NOT NULL DEFAULT 0,              -- bytes; 0 unlimited; -1 policy-unlimited
  disk_used     INTEGER NOT NULL DEFAULT 0,              -- sum of sizes of all revisions owned
  twofa         INTEGER NOT NULL DEFAULT 0,
  twofa_secret  TEXT,
  avatar        TEXT NOT NULL DEFAULT '',
  comment       TEXT NOT NULL DEFAULT '',
  created       INTEGER NOT NULL,
  updated       INTEGER NOT NULL
);

CREATE TABLE sessions (
  id            TEXT PRIMARY KEY,                        -- the JWT's jti
  user_uuid     TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
  fileaccesskey TEXT NOT NULL UNIQUE,
  created       INTEGER NOT NULL,
  expires       INTEGER NOT NULL,
  revoked       INTEGER,                                 -- when logout/deactivation revoked it
  ip            TEXT
);
CREATE INDEX sessions_user ON sessions(user_uuid);

CREATE TABLE nodes (
  uuid          TEXT PRIMARY KEY,
  owner_uuid    TEXT NOT NULL,
  owner_type    TEXT NOT NULL CHECK (owner_type IN ('User', 'Group')),
  parent_uuid   TEXT REFERENCES nodes(uuid),             -- NULL only for top-level folders
  top_kind      TEXT,                                    -- 'home', 'trash', ... on top-level folders
  name          TEXT NOT NULL,
  type          TEXT NOT NULL CHECK (type IN ('Dir', 'File')),
  created       INTEGER NOT NULL,
  updated       INTEGER NOT NULL,
  revision      INTEGER,                                 -- latest revision (files)
  size          INTEGER NOT NULL DEFAULT 0,              -- size of the latest revision (files)
  trashed_from  TEXT,                                    -- parent before DELETE moved it to trash
  trashed_name  TEXT                                     -- name before DELETE (renamed on clash)
);
CREATE UNIQUE INDEX nodes_unique_name ON nodes(parent_uuid, name) WHERE parent_uuid IS NOT NULL;
CREATE UNIQUE INDEX nodes_top_level ON nodes(owner_uuid, top_kind) WHERE top_kind IS NOT NULL;
CREATE INDEX nodes_owner ON nodes(owner_uuid);

CREATE TABLE blobs (
  sha256        TEXT PRIMARY KEY,
  size          INTEGER NOT NULL,
  refs          INTEGER NOT NULL CHECK (refs >= 0)
);

CREATE TABLE revisions (
  node_uuid     TEXT NOT NULL REFERENCES nodes(uuid) ON DELETE CASCADE,
  revision      INTEGER NOT NULL,
  blob_sha256   TEXT NOT NULL REFERENCES blobs(sha256),
  size          INTEGER NOT NULL,
  created       INTEGER NOT NULL,
  uploader_uuid TEXT,
  PRIMARY KEY (node_uuid, revision)
);
CREATE INDEX revisions_blob ON revisions(blob_sha256);

CREATE TABLE stars (
  user_uuid     TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
  node_uuid     TEXT NOT NULL REFERENCES nodes(uuid) ON DELETE CASCADE,
  created       INTEGER NOT NULL,
  PRIMARY KEY (user_uuid, node_uuid)
);
CREATE INDEX stars_node ON stars(node_uuid);

CREATE TABLE upload_tokens (
  token_hash    TEXT PRIMARY KEY,                        -- sha256 of the token; the token is never stored
  user_uuid     TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
  session_id    TEXT NOT NULL,
  target_uuid   TEXT NOT NULL,                           -- folder (new file) or file (new revision)
  created       INTEGER NOT NULL,
  used          INTEGER                                  -- when it was presented (single use)
);

CREATE TABLE login_events (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  user_uuid     TEXT REFERENCES users(uuid) ON DELETE CASCADE,
  action        TEXT NOT NULL,                           -- 'login' or 'logout'
  action_args   TEXT NOT NULL DEFAULT '',
  error_details TEXT NOT NULL DEFAULT '',
  ip_address    TEXT NOT NULL DEFAULT '',
  status        TEXT NOT NULL,                           -- 'success' or 'failure'
  timestamp     INTEGER NOT NULL
);
CREATE INDEX login_events_user ON login_events(user_uuid, timestamp);
