-- Organizations become rows, and groups arrive: group rows (profile, quota, usage), memberships
-- with their permissions, and group tags. Group nodes are ordinary `nodes` rows with
-- owner_type 'Group'. Permission lists are JSON arrays of the "Permission values" of docs/api.md.

CREATE TABLE organizations (
  id                    TEXT PRIMARY KEY,               -- 1-64 of A-Z a-z 0-9 . _ - (schemas/organizations.ts)
  name                  TEXT NOT NULL,
  allow_unlimited_quota INTEGER NOT NULL DEFAULT 0,     -- whether users may have disk_quota -1
  created               INTEGER NOT NULL,
  updated               INTEGER NOT NULL
);
-- 'default' and every org_id already on a user. They keep accepting -1 as they did before.
INSERT INTO organizations (id, name, allow_unlimited_quota, created, updated)
  VALUES ('default', 'Default organization', 1, CAST(strftime('%s', 'now') AS INTEGER) * 1000, CAST(strftime('%s', 'now') AS INTEGER) * 1000);
INSERT OR IGNORE INTO organizations (id, name, allow_unlimited_quota, created, updated)
  SELECT DISTINCT org_id, org_id, 1, CAST(strftime('%s', 'now') AS INTEGER) * 1000, CAST(strftime('%s', 'now') AS INTEGER) * 1000 FROM users;
CREATE INDEX users_org ON users(org_id);

CREATE TABLE groups (
  uuid                  TEXT PRIMARY KEY,
  org_id                TEXT NOT NULL REFERENCES organizations(id),
  name                  TEXT NOT NULL,
  description           TEXT NOT NULL DEFAULT '',
  disk_quota            INTEGER NOT NULL DEFAULT 0,     -- bytes; 0 unlimited
  disk_used             INTEGER NOT NULL DEFAULT 0,     -- sum of sizes of all revisions the group owns
  accept_incoming       TEXT NOT NULL DEFAULT 'admins' CHECK (accept_incoming IN ('members', 'admins')),
  private_shares_notify TEXT NOT NULL DEFAULT 'admins' CHECK (private_shares_notify IN ('members', 'admins')),
  created               INTEGER NOT NULL,
  updated               INTEGER NOT NULL
);
CREATE UNIQUE INDEX groups_org_name ON groups(org_id, name COLLATE NOCASE);

-- access.ts reads one row of this table per request on a group's node (primary key lookup).
CREATE TABLE group_members (
  group_uuid        TEXT NOT NULL REFERENCES groups(uuid) ON DELETE CASCADE,
  user_uuid         TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
  is_admin          INTEGER NOT NULL DEFAULT 0,
  node_permissions  TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(node_permissions)),
  tag_permissions   TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tag_permissions)),
  share_permissions TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(share_permissions)),
  added             INTEGER NOT NULL,
  PRIMARY KEY (group_uuid, user_uuid)
);
CREATE INDEX group_members_user ON group_members(user_uuid);

CREATE TABLE group_tags (
  group_uuid   TEXT NOT NULL REFERENCES groups(uuid) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  class        TEXT NOT NULL,                             -- one of store.tagClasses when created
  creator_uuid TEXT REFERENCES users(uuid) ON DELETE SET NULL,
  created      INTEGER NOT NULL
);
CREATE UNIQUE INDEX group_tags_name ON group_tags(group_uuid, name COLLATE NOCASE);
