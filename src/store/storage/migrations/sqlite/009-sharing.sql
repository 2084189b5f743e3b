-- Sharing (issue 8): snapshots (the copy a share_copy takes, without node rows), pending
-- incoming shares, approvers and share approval requests, and the share links extension
-- (public links, private shares, upload links). docs/store-semantics.md "Sharing" says what each
-- state means. Times are epoch milliseconds.

-- A snapshot: the structure of a subtree as it was when shared, each file entry holding ONE
-- reference of its blob (blobs.refs), so the bytes outlive whatever happens to the original and
-- are never duplicated. Counted against nobody's disk_used. Held by exactly one pending incoming
-- share or one share_copy approval request; released (or handed to new nodes) when that is answered.
CREATE TABLE snapshots (
  uuid          TEXT PRIMARY KEY,
  source_uuid   TEXT,                                    -- the node it was taken from (no key: that node may go)
  name          TEXT NOT NULL,
  type          TEXT NOT NULL CHECK (type IN ('Dir', 'File')),
  bytes         INTEGER NOT NULL,                        -- sum of the file entries' sizes
  created       INTEGER NOT NULL
);

CREATE TABLE snapshot_entries (
  snapshot_uuid TEXT NOT NULL REFERENCES snapshots(uuid) ON DELETE CASCADE,
  id            INTEGER NOT NULL,                        -- 0 is the root; parents have smaller ids than children
  parent_id     INTEGER,                                 -- NULL for the root
  name          TEXT NOT NULL,
  type          TEXT NOT NULL CHECK (type IN ('Dir', 'File')),
  blob_hash     TEXT REFERENCES blobs(hash),             -- files: the latest revision's blob
  size          INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (snapshot_uuid, id),
  CHECK ((type = 'File') = (blob_hash IS NOT NULL))
);
CREATE INDEX snapshot_entries_blob ON snapshot_entries(blob_hash) WHERE blob_hash IS NOT NULL;

-- Incoming shares (docs/api.md "Pending incoming share": pending, accepted, rejected). An answered row
-- stays as the record of the answer; its snapshot is gone by then (materialised or released).
CREATE TABLE incoming_shares (
  uuid             TEXT PRIMARY KEY,
  recipient_type   TEXT NOT NULL CHECK (recipient_type IN ('User', 'Group')),
  recipient_uuid   TEXT NOT NULL,                        -- a user or a group (no key: either table)
  sharer_uuid      TEXT REFERENCES users(uuid) ON DELETE SET NULL,
  sharer_fullname  TEXT NOT NULL,                        -- kept when the sharer is deleted
  source_uuid      TEXT REFERENCES nodes(uuid) ON DELETE SET NULL,
  name             TEXT NOT NULL,
  type             TEXT NOT NULL CHECK (type IN ('Dir', 'File')),
  size             INTEGER NOT NULL,
  snapshot_uuid    TEXT REFERENCES snapshots(uuid),      -- while pending
  state            TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'accepted', 'rejected')),
  shared_at        INTEGER NOT NULL,
  answered_at      INTEGER,
  answered_by      TEXT,                                 -- user who answered (NULL: delivered straight, edition 1.0)
  node_uuid        TEXT,                                 -- the copy that accepting made
  CHECK ((state = 'pending') = (snapshot_uuid IS NOT NULL))
);
CREATE INDEX incoming_shares_recipient ON incoming_shares(recipient_uuid, state);
CREATE INDEX incoming_shares_source ON incoming_shares(source_uuid) WHERE source_uuid IS NOT NULL;
CREATE INDEX incoming_shares_sharer ON incoming_shares(sharer_uuid) WHERE sharer_uuid IS NOT NULL;

-- Approvers (docs/api.md "Approver") of a user's or a group's workspace, per share type.
CREATE TABLE approvers (
  workspace_type TEXT NOT NULL CHECK (workspace_type IN ('User', 'Group')),
  workspace_uuid TEXT NOT NULL,
  share_type     TEXT NOT NULL CHECK (share_type IN ('public', 'private', 'upload', 'share_copy')),
  approver_uuid  TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
  created        INTEGER NOT NULL,
  PRIMARY KEY (workspace_uuid, share_type, approver_uuid)
);
CREATE INDEX approvers_approver ON approvers(approver_uuid);

-- Share approval requests (docs/api.md "Pending share approval request": pending, approved, rejected,
-- withdrawn). `details` is what would be shared (JSON: recipients, writable, expires, and the
-- hashes of a link's token and password, never the secrets); share_copy requests hold the
-- snapshot taken when requested.
CREATE TABLE share_requests (
  uuid             TEXT PRIMARY KEY,
  workspace_type   TEXT NOT NULL CHECK (workspace_type IN ('User', 'Group')),
  workspace_uuid   TEXT NOT NULL,
  share_type       TEXT NOT NULL CHECK (share_type IN ('public', 'private', 'upload', 'share_copy')),
  requester_uuid   TEXT REFERENCES users(uuid) ON DELETE SET NULL,
  node_uuid        TEXT REFERENCES nodes(uuid) ON DELETE SET NULL,
  node_name        TEXT NOT NULL,
  node_type        TEXT NOT NULL CHECK (node_type IN ('Dir', 'File')),
  details          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(details)),
  snapshot_uuid    TEXT REFERENCES snapshots(uuid),
  comment          TEXT NOT NULL DEFAULT '',             -- the requester's
  state            TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'rejected', 'withdrawn')),
  requested_at     INTEGER NOT NULL,
  decided_at       INTEGER,
  decided_by       TEXT,
  decision_comment TEXT NOT NULL DEFAULT '',             -- the approver's
  result_uuid      TEXT                                  -- the share an approval created (links)
);
CREATE INDEX share_requests_workspace ON share_requests(workspace_uuid, share_type, state);
CREATE INDEX share_requests_requester ON share_requests(requester_uuid);
CREATE INDEX share_requests_node ON share_requests(node_uuid) WHERE node_uuid IS NOT NULL;

-- Share links (docs/extensions.md "Share links and private shares"): public links, private
-- shares and upload links. They go with their node (a purge, a deleted owner).
CREATE TABLE shares (
  uuid           TEXT PRIMARY KEY,
  type           TEXT NOT NULL CHECK (type IN ('public', 'private', 'upload')),
  node_uuid      TEXT NOT NULL REFERENCES nodes(uuid) ON DELETE CASCADE,
  creator_uuid   TEXT REFERENCES users(uuid) ON DELETE SET NULL,
  token_hash     TEXT UNIQUE,                            -- public and upload: sha256 of the token; never the token
  password_hash  TEXT,                                   -- scrypt, when a password protects the link
  expires        INTEGER,                                -- NULL: never
  writable       INTEGER NOT NULL DEFAULT 0,             -- private: recipients may change the tree
  created        INTEGER NOT NULL,
  CHECK ((type = 'private') = (token_hash IS NULL))
);
CREATE INDEX shares_node ON shares(node_uuid, type);
CREATE INDEX shares_creator ON shares(creator_uuid);

-- Recipients of private shares: users, or groups (every member). access.ts finds a caller's
-- by this index, then walks the node's ancestry once.
CREATE TABLE share_recipients (
  share_uuid     TEXT NOT NULL REFERENCES shares(uuid) ON DELETE CASCADE,
  recipient_type TEXT NOT NULL CHECK (recipient_type IN ('User', 'Group')),
  recipient_uuid TEXT NOT NULL,
  PRIMARY KEY (share_uuid, recipient_uuid)
);
CREATE INDEX share_recipients_recipient ON share_recipients(recipient_uuid);
