-- The bridge's own numeric file ids (issue 30; docs/extensions.md "Numeric file ids"), in the
-- bridge's state (bridge.sqlite format 7, or the store's database for the bridge in-process):
-- numbers for what the store gives none, the collections the bridge makes up (`/`, `/groups/`,
-- a group's folder, the top-level folders) and every node of a store without `file_id`. Given
-- on first sight, never reused (AUTOINCREMENT; PostgreSQL: an identity), never deleted.
--   node_id   the resource's key: a node's UUID, or a made-up collection's key (`root:<user>`)
-- dav_instance: what the bridge names this deployment by (Nextcloud's instance id in oc:id) and
-- oc:data-fingerprint, each made at random by the first bridge that needs it; `driveway restore`
-- deletes the fingerprint so the next start makes a new one.
CREATE TABLE dav_file_ids (
  file_id  INTEGER PRIMARY KEY AUTOINCREMENT,
  node_id  TEXT NOT NULL UNIQUE
);
CREATE TABLE dav_instance (
  name   TEXT PRIMARY KEY,
  value  TEXT NOT NULL
);
