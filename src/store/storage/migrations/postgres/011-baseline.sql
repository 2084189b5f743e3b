-- The PostgreSQL schema equal to SQLite's after migrations 001-011 (storage/migrations.ts):
-- times and sizes BIGINT (milliseconds, bytes), flags 0/1, blobs BYTEA, JSON kept as text,
-- case-insensitive names (SQLite COLLATE NOCASE) as citext (a trusted extension: the database
-- owner may create it).
CREATE EXTENSION IF NOT EXISTS citext;

CREATE TABLE users (
  uuid          TEXT PRIMARY KEY,
  username      CITEXT NOT NULL UNIQUE,   -- email, or 'admin' for the built-in one
  email         TEXT NOT NULL,
  fullname      TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  is_active     BIGINT NOT NULL DEFAULT 1,
  is_admin      BIGINT NOT NULL DEFAULT 0,
  is_builtin    BIGINT NOT NULL DEFAULT 0,
  org_id        TEXT NOT NULL DEFAULT 'default',
  disk_quota    BIGINT NOT NULL DEFAULT 0,              -- bytes; 0 unlimited; -1 policy-unlimited
  disk_used     BIGINT NOT NULL DEFAULT 0,              -- sum of sizes of all revisions owned
  twofa         BIGINT NOT NULL DEFAULT 0,
  twofa_secret  TEXT,
  comment       TEXT NOT NULL DEFAULT '',
  created       BIGINT NOT NULL,
  updated       BIGINT NOT NULL
  , password_changed BIGINT NOT NULL DEFAULT 0, notifications TEXT NOT NULL DEFAULT '{}', twofa_last_step BIGINT);
CREATE TABLE sessions (
  id            TEXT PRIMARY KEY,                        -- the JWT's jti
  user_uuid     TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
  fileaccesskey TEXT NOT NULL UNIQUE,
  created       BIGINT NOT NULL,
  expires       BIGINT NOT NULL,
  revoked       BIGINT,                                 -- when logout/deactivation revoked it
  ip            TEXT
  , app_password_uuid TEXT);
CREATE INDEX sessions_user ON sessions(user_uuid);
CREATE TABLE nodes (
  uuid          TEXT PRIMARY KEY,
  owner_uuid    TEXT NOT NULL,
  owner_type    TEXT NOT NULL CHECK (owner_type IN ('User', 'Group')),
  parent_uuid   TEXT REFERENCES nodes(uuid),             -- NULL only for top-level folders
  top_kind      TEXT,                                    -- 'home', 'trash', ... on top-level folders
  name          TEXT NOT NULL,
  type          TEXT NOT NULL CHECK (type IN ('Dir', 'File')),
  created       BIGINT NOT NULL,
  updated       BIGINT NOT NULL,
  revision      BIGINT,                                 -- latest revision (files)
  size          BIGINT NOT NULL DEFAULT 0,              -- size of the latest revision (files)
  trashed_from  TEXT,                                    -- parent before DELETE moved it to trash
  trashed_name  TEXT                                     -- name before DELETE (renamed on clash)
);
CREATE UNIQUE INDEX nodes_unique_name ON nodes(parent_uuid, name) WHERE parent_uuid IS NOT NULL;
CREATE UNIQUE INDEX nodes_top_level ON nodes(owner_uuid, top_kind) WHERE top_kind IS NOT NULL;
CREATE INDEX nodes_owner ON nodes(owner_uuid);
CREATE TABLE blobs (
  hash        TEXT PRIMARY KEY,
  size          BIGINT NOT NULL,
  refs          BIGINT NOT NULL CHECK (refs >= 0)
  , data BYTEA);
CREATE TABLE revisions (
  node_uuid     TEXT NOT NULL REFERENCES nodes(uuid) ON DELETE CASCADE,
  revision      BIGINT NOT NULL,
  blob_hash   TEXT NOT NULL REFERENCES blobs(hash),
  size          BIGINT NOT NULL,
  created       BIGINT NOT NULL,
  uploader_uuid TEXT,
  PRIMARY KEY (node_uuid, revision)
);
CREATE INDEX revisions_blob ON revisions(blob_hash);
CREATE TABLE stars (
  user_uuid     TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
  node_uuid     TEXT NOT NULL REFERENCES nodes(uuid) ON DELETE CASCADE,
  created       BIGINT NOT NULL,
  PRIMARY KEY (user_uuid, node_uuid)
);
CREATE INDEX stars_node ON stars(node_uuid);
CREATE TABLE login_events (
  id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_uuid     TEXT REFERENCES users(uuid) ON DELETE CASCADE,
  action        TEXT NOT NULL,                           -- 'login' or 'logout'
  action_args   TEXT NOT NULL DEFAULT '',
  error_details TEXT NOT NULL DEFAULT '',
  ip_address    TEXT NOT NULL DEFAULT '',
  status        TEXT NOT NULL,                           -- 'success' or 'failure'
  timestamp     BIGINT NOT NULL
);
CREATE TABLE webdrive_endpoints (
  endpoint                  TEXT PRIMARY KEY,                 -- 3-10 of a-z 0-9 (db/webdrive.ts)
  owner_type                TEXT NOT NULL CHECK (owner_type IN ('User', 'Group')),
  owner_uuid                TEXT NOT NULL UNIQUE,
  show_url_to_group_members BIGINT NOT NULL DEFAULT 1,        -- groups: non-admin members may see it
  created                   BIGINT NOT NULL
);
CREATE TABLE avatars (
  owner_uuid   TEXT PRIMARY KEY,                 -- a user or a group
  content_type TEXT NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg')),
  bytes        BYTEA NOT NULL,
  version      TEXT NOT NULL,
  updated      BIGINT NOT NULL
);
CREATE TABLE app_passwords (
  uuid          TEXT PRIMARY KEY,
  user_uuid     TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  secret_hash   TEXT NOT NULL UNIQUE,                    -- sha256 (hex) of the password; it is never stored
  created       BIGINT NOT NULL,
  last_used     BIGINT                                  -- last login with it
);
CREATE INDEX app_passwords_user ON app_passwords(user_uuid);
CREATE INDEX sessions_app_password ON sessions(app_password_uuid) WHERE app_password_uuid IS NOT NULL;
CREATE INDEX login_events_user ON login_events(user_uuid);
CREATE TABLE organizations (
  id                    TEXT PRIMARY KEY,               -- 1-64 of A-Z a-z 0-9 . _ - (schemas/organizations.ts)
  name                  TEXT NOT NULL,
  allow_unlimited_quota BIGINT NOT NULL DEFAULT 0,     -- whether users may have disk_quota -1
  created               BIGINT NOT NULL,
  updated               BIGINT NOT NULL
);
-- As SQLite's 008 made it: the organization every user and group starts in.
INSERT INTO organizations (id, name, allow_unlimited_quota, created, updated)
  VALUES ('default', 'Default organization', 1, (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT, (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT);
CREATE INDEX users_org ON users(org_id);
CREATE TABLE groups (
  uuid                  TEXT PRIMARY KEY,
  org_id                TEXT NOT NULL REFERENCES organizations(id),
  name                  CITEXT NOT NULL,
  description           TEXT NOT NULL DEFAULT '',
  disk_quota            BIGINT NOT NULL DEFAULT 0,     -- bytes; 0 unlimited
  disk_used             BIGINT NOT NULL DEFAULT 0,     -- sum of sizes of all revisions the group owns
  accept_incoming       TEXT NOT NULL DEFAULT 'admins' CHECK (accept_incoming IN ('members', 'admins')),
  private_shares_notify TEXT NOT NULL DEFAULT 'admins' CHECK (private_shares_notify IN ('members', 'admins')),
  created               BIGINT NOT NULL,
  updated               BIGINT NOT NULL
);
CREATE UNIQUE INDEX groups_org_name ON groups(org_id, name);
CREATE TABLE group_members (
  group_uuid        TEXT NOT NULL REFERENCES groups(uuid) ON DELETE CASCADE,
  user_uuid         TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
  is_admin          BIGINT NOT NULL DEFAULT 0,
  node_permissions  TEXT NOT NULL DEFAULT '[]' CHECK (node_permissions::jsonb IS NOT NULL),
  tag_permissions   TEXT NOT NULL DEFAULT '[]' CHECK (tag_permissions::jsonb IS NOT NULL),
  share_permissions TEXT NOT NULL DEFAULT '[]' CHECK (share_permissions::jsonb IS NOT NULL),
  added             BIGINT NOT NULL,
  PRIMARY KEY (group_uuid, user_uuid)
);
CREATE INDEX group_members_user ON group_members(user_uuid);
CREATE TABLE group_tags (
  group_uuid   TEXT NOT NULL REFERENCES groups(uuid) ON DELETE CASCADE,
  name         CITEXT NOT NULL,
  class        TEXT NOT NULL,                             -- one of store.tagClasses when created
  creator_uuid TEXT REFERENCES users(uuid) ON DELETE SET NULL,
  created      BIGINT NOT NULL
);
CREATE UNIQUE INDEX group_tags_name ON group_tags(group_uuid, name);
CREATE TABLE snapshots (
  uuid          TEXT PRIMARY KEY,
  source_uuid   TEXT,                                    -- the node it was taken from (no key: that node may go)
  name          TEXT NOT NULL,
  type          TEXT NOT NULL CHECK (type IN ('Dir', 'File')),
  bytes         BIGINT NOT NULL,                        -- sum of the file entries' sizes
  created       BIGINT NOT NULL
);
CREATE TABLE snapshot_entries (
  snapshot_uuid TEXT NOT NULL REFERENCES snapshots(uuid) ON DELETE CASCADE,
  id            BIGINT NOT NULL,                        -- 0 is the root; parents have smaller ids than children
  parent_id     BIGINT,                                 -- NULL for the root
  name          TEXT NOT NULL,
  type          TEXT NOT NULL CHECK (type IN ('Dir', 'File')),
  blob_hash     TEXT REFERENCES blobs(hash),             -- files: the latest revision's blob
  size          BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (snapshot_uuid, id),
  CHECK ((type = 'File') = (blob_hash IS NOT NULL))
);
CREATE INDEX snapshot_entries_blob ON snapshot_entries(blob_hash) WHERE blob_hash IS NOT NULL;
CREATE TABLE incoming_shares (
  uuid             TEXT PRIMARY KEY,
  recipient_type   TEXT NOT NULL CHECK (recipient_type IN ('User', 'Group')),
  recipient_uuid   TEXT NOT NULL,                        -- a user or a group (no key: either table)
  sharer_uuid      TEXT REFERENCES users(uuid) ON DELETE SET NULL,
  sharer_fullname  TEXT NOT NULL,                        -- kept when the sharer is deleted
  source_uuid      TEXT REFERENCES nodes(uuid) ON DELETE SET NULL,
  name             TEXT NOT NULL,
  type             TEXT NOT NULL CHECK (type IN ('Dir', 'File')),
  size             BIGINT NOT NULL,
  snapshot_uuid    TEXT REFERENCES snapshots(uuid),      -- while pending
  state            TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'accepted', 'rejected')),
  shared_at        BIGINT NOT NULL,
  answered_at      BIGINT,
  answered_by      TEXT,                                 -- user who answered (NULL: delivered straight, edition 1.0)
  node_uuid        TEXT,                                 -- the copy that accepting made
  CHECK ((state = 'pending') = (snapshot_uuid IS NOT NULL))
);
CREATE INDEX incoming_shares_recipient ON incoming_shares(recipient_uuid, state);
CREATE INDEX incoming_shares_source ON incoming_shares(source_uuid) WHERE source_uuid IS NOT NULL;
CREATE INDEX incoming_shares_sharer ON incoming_shares(sharer_uuid) WHERE sharer_uuid IS NOT NULL;
CREATE TABLE approvers (
  workspace_type TEXT NOT NULL CHECK (workspace_type IN ('User', 'Group')),
  workspace_uuid TEXT NOT NULL,
  share_type     TEXT NOT NULL CHECK (share_type IN ('public', 'private', 'upload', 'share_copy')),
  approver_uuid  TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
  created        BIGINT NOT NULL,
  PRIMARY KEY (workspace_uuid, share_type, approver_uuid)
);
CREATE INDEX approvers_approver ON approvers(approver_uuid);
CREATE TABLE share_requests (
  uuid             TEXT PRIMARY KEY,
  workspace_type   TEXT NOT NULL CHECK (workspace_type IN ('User', 'Group')),
  workspace_uuid   TEXT NOT NULL,
  share_type       TEXT NOT NULL CHECK (share_type IN ('public', 'private', 'upload', 'share_copy')),
  requester_uuid   TEXT REFERENCES users(uuid) ON DELETE SET NULL,
  node_uuid        TEXT REFERENCES nodes(uuid) ON DELETE SET NULL,
  node_name        TEXT NOT NULL,
  node_type        TEXT NOT NULL CHECK (node_type IN ('Dir', 'File')),
  details          TEXT NOT NULL DEFAULT '{}' CHECK (details::jsonb IS NOT NULL),
  snapshot_uuid    TEXT REFERENCES snapshots(uuid),
  comment          TEXT NOT NULL DEFAULT '',             -- the requester's
  state            TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'rejected', 'withdrawn')),
  requested_at     BIGINT NOT NULL,
  decided_at       BIGINT,
  decided_by       TEXT,
  decision_comment TEXT NOT NULL DEFAULT '',             -- the approver's
  result_uuid      TEXT                                  -- the share an approval created (links)
);
CREATE INDEX share_requests_workspace ON share_requests(workspace_uuid, share_type, state);
CREATE INDEX share_requests_requester ON share_requests(requester_uuid);
CREATE INDEX share_requests_node ON share_requests(node_uuid) WHERE node_uuid IS NOT NULL;
CREATE TABLE shares (
  uuid           TEXT PRIMARY KEY,
  type           TEXT NOT NULL CHECK (type IN ('public', 'private', 'upload')),
  node_uuid      TEXT NOT NULL REFERENCES nodes(uuid) ON DELETE CASCADE,
  creator_uuid   TEXT REFERENCES users(uuid) ON DELETE SET NULL,
  token_hash     TEXT UNIQUE,                            -- public and upload: sha256 of the token; never the token
  password_hash  TEXT,                                   -- scrypt, when a password protects the link
  expires        BIGINT,                                -- NULL: never
  writable       BIGINT NOT NULL DEFAULT 0,             -- private: recipients may change the tree
  created        BIGINT NOT NULL,
  CHECK ((type = 'private') = (token_hash IS NULL))
);
CREATE INDEX shares_node ON shares(node_uuid, type);
CREATE INDEX shares_creator ON shares(creator_uuid);
CREATE TABLE share_recipients (
  share_uuid     TEXT NOT NULL REFERENCES shares(uuid) ON DELETE CASCADE,
  recipient_type TEXT NOT NULL CHECK (recipient_type IN ('User', 'Group')),
  recipient_uuid TEXT NOT NULL,
  PRIMARY KEY (share_uuid, recipient_uuid)
);
CREATE INDEX share_recipients_recipient ON share_recipients(recipient_uuid);
CREATE TABLE blob_intents (
  id        TEXT PRIMARY KEY,
  kind      TEXT NOT NULL CHECK (kind IN ('upload', 'delete')),
  hash      TEXT NOT NULL,
  key       TEXT NOT NULL,
  upload_id TEXT,                 -- the multipart upload, once created (uploads only)
  created   BIGINT NOT NULL,
  expires   BIGINT NOT NULL
);
CREATE INDEX blob_intents_hash ON blob_intents(hash);
CREATE INDEX blob_intents_expires ON blob_intents(expires);

-- One-shot upload tokens: SQLite keeps them in a TEMP table of its one connection
-- (db/database.ts); instances share them here. UNLOGGED: a token lives seconds, and one that a
-- server crash forgets answers 410 like an expired one.
CREATE UNLOGGED TABLE upload_tokens (
  token_hash  TEXT PRIMARY KEY,
  user_uuid   TEXT NOT NULL,
  session_id  TEXT NOT NULL,
  target_uuid TEXT NOT NULL,
  created     BIGINT NOT NULL,
  used        BIGINT
);
CREATE INDEX upload_tokens_created ON upload_tokens(created);
