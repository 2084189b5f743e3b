-- As SQLite's 016: when a node was moved into trash, and an organization's retention settings
-- (NULL: the global store.retention value applies). Items already in trash count from this upgrade.
ALTER TABLE nodes ADD COLUMN trashed_at BIGINT;
UPDATE nodes SET trashed_at = (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT
  WHERE parent_uuid IN (SELECT uuid FROM nodes WHERE top_kind = 'trash');
ALTER TABLE organizations ADD COLUMN keep_revisions BIGINT;
ALTER TABLE organizations ADD COLUMN keep_revision_days BIGINT;
ALTER TABLE organizations ADD COLUMN trash_days BIGINT;
