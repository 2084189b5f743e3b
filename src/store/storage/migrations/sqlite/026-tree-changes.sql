-- Folder tree versions and recursive sizes (issue 30; docs/store-semantics.md "Tree versions"):
-- every change below a folder adds one row per folder on the way up to its top-level folder, in
-- the change's transaction. Insert-only (a background compaction merges a folder's old rows into
-- one, keeping MAX(seq), SUM(changes) and SUM(bytes)), so no writer waits on a row another
-- writer of the drive holds. A folder's tree version is MAX(seq) with SUM(changes); its recursive
-- size (the latest revision of every file below it, trash included for the trash folder) is SUM(bytes).
--   seq          order of the row (the rowid here; a sequence on PostgreSQL)
--   folder_uuid  the folder whose subtree changed (the change's folder and each one above it)
--   changes      changes the row counts (1; more on a compacted row)
--   bytes        what the change added to the folder's recursive size (negative for a removal)
CREATE TABLE tree_changes (
  seq         INTEGER PRIMARY KEY,
  folder_uuid TEXT NOT NULL REFERENCES nodes(uuid) ON DELETE CASCADE,
  changes     INTEGER NOT NULL,
  bytes       INTEGER NOT NULL
);
CREATE INDEX tree_changes_folder ON tree_changes(folder_uuid, seq);
-- Existing trees: one row per folder holding its recursive size.
WITH RECURSIVE up(folder, size) AS (
  SELECT parent_uuid, size FROM nodes WHERE type = 'File' AND parent_uuid IS NOT NULL
  UNION ALL
  SELECT n.parent_uuid, up.size FROM up JOIN nodes n ON n.uuid = up.folder WHERE n.parent_uuid IS NOT NULL
)
INSERT INTO tree_changes (folder_uuid, changes, bytes)
SELECT d.uuid, 1, COALESCE(s.bytes, 0)
FROM nodes d LEFT JOIN (SELECT folder, SUM(size) AS bytes FROM up GROUP BY folder) s ON s.folder = d.uuid
WHERE d.type = 'Dir';
