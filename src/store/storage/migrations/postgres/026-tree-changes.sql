-- Folder tree versions and recursive sizes (issue 30; docs/store-semantics.md "Tree versions"):
-- every change below a folder adds one row per folder on the way up to its top-level folder, in
-- the change's transaction. Insert-only (a background compaction merges a folder's old rows into
-- one, keeping MAX(seq), SUM(changes) and SUM(bytes)), so no writer waits on a row another
-- writer of the drive holds. A folder's tree version is MAX(seq) with SUM(changes) (seqs are not
-- committed in order: MAX alone could stay still); its recursive size is SUM(bytes).
--   seq          from a sequence (never blocks, never rolled back)
--   folder_uuid  the folder whose subtree changed (the change's folder and each one above it)
--   changes      changes the row counts (1; more on a compacted row)
--   bytes        what the change added to the folder's recursive size (negative for a removal)
CREATE SEQUENCE tree_change_seq;
CREATE TABLE tree_changes (
  seq         BIGINT NOT NULL DEFAULT nextval('tree_change_seq'),
  folder_uuid TEXT NOT NULL REFERENCES nodes(uuid) ON DELETE CASCADE,
  changes     BIGINT NOT NULL,
  bytes       BIGINT NOT NULL
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
-- Change notifications (migration 014) for tree versions: a statement that inserted a change's
-- rows for a folder and the folders above it announces those above as `^<uuid>` (and `^<kind>:
-- <owner>` for a top-level one): their listings hold an entry whose tree version moved, though
-- their own children did not change (the folder itself is announced by the nodes triggers). A
-- single-row statement (a new folder's first row, a compaction) announces nothing.
CREATE FUNCTION driveway_tree_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  above TEXT[];
  payload TEXT;
BEGIN
  SELECT array_agg(DISTINCT r.folder_uuid) INTO above FROM new_rows r
  WHERE EXISTS (SELECT 1 FROM new_rows c JOIN nodes n ON n.uuid = c.folder_uuid WHERE n.parent_uuid = r.folder_uuid);
  IF above IS NULL OR cardinality(above) = 0 THEN
    RETURN NULL;
  END IF;
  IF cardinality(above) > 64 THEN
    PERFORM pg_notify('driveway_changes', '*');
    RETURN NULL;
  END IF;
  SELECT string_agg('^' || k, ' ') INTO payload FROM (
    SELECT unnest(above) AS k
    UNION
    SELECT n.top_kind || ':' || n.owner_uuid FROM nodes n WHERE n.uuid = ANY(above) AND n.top_kind IS NOT NULL
  ) words;
  PERFORM pg_notify('driveway_changes', CASE WHEN octet_length(payload) > 7900 THEN '*' ELSE payload END);
  RETURN NULL;
END $$;
CREATE TRIGGER driveway_tree_changes_inserted AFTER INSERT ON tree_changes REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION driveway_tree_changed();
