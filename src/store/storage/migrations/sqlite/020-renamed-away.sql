-- Saves by rename-away (contracts/renamed-away.ts, docs/bridge-design.md "Saves"): the bridge's memo
-- of a file renamed away to an editor's backup name (kind 'away', keyed by the name it left) and
-- of one restored from it (kind 'restored', keyed by the backup name), per user and folder key.
-- Rows live a minute; each insert sweeps older ones.
CREATE TABLE dav_renamed_away (
  kind       TEXT NOT NULL CHECK (kind IN ('away', 'restored')),
  user_id    TEXT NOT NULL,
  folder     TEXT NOT NULL,
  name       TEXT NOT NULL,
  node_id    TEXT NOT NULL,
  other_name TEXT NOT NULL,
  revision   BIGINT,
  at_ms      BIGINT NOT NULL,
  PRIMARY KEY (kind, user_id, folder, name)
);
CREATE INDEX dav_renamed_away_at ON dav_renamed_away(at_ms);
