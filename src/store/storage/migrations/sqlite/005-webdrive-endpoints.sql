-- WebDrive endpoints: the name in a bridge URL (/webdrive/<endpoint>/) that serves a user's or a
-- group's home. One namespace for users and groups (a name names one drive), one endpoint per
-- owner. No foreign key: the owner is a user or a group; deleting either removes its row (ops/).
CREATE TABLE webdrive_endpoints (
  endpoint                  TEXT PRIMARY KEY,                 -- 3-10 of a-z 0-9 (db/webdrive.ts)
  owner_type                TEXT NOT NULL CHECK (owner_type IN ('User', 'Group')),
  owner_uuid                TEXT NOT NULL UNIQUE,
  show_url_to_group_members INTEGER NOT NULL DEFAULT 1,        -- groups: non-admin members may see it
  created                   INTEGER NOT NULL
);
