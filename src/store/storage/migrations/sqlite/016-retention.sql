-- Retention (docs/operations.md "Retention"): when a node was moved into trash, so trash items
-- can expire by age, and an organization's own retention settings (NULL: the global
-- store.retention value applies). Items already in trash count from this upgrade, so none of
-- them is deleted sooner than the operator's trashDays after it.
ALTER TABLE nodes ADD COLUMN trashed_at INTEGER;          -- ms; set on the direct children of a trash folder only
UPDATE nodes SET trashed_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000
  WHERE parent_uuid IN (SELECT uuid FROM nodes WHERE top_kind = 'trash');
ALTER TABLE organizations ADD COLUMN keep_revisions INTEGER;       -- newest revisions kept per file, current included; 0 all
ALTER TABLE organizations ADD COLUMN keep_revision_days INTEGER;   -- days an old revision is kept; 0 forever
ALTER TABLE organizations ADD COLUMN trash_days INTEGER;           -- days a trash item is kept; 0 forever
