-- Stable numeric file ids (issue 30; docs/extensions.md "Numeric file ids"): beside its UUID
-- (still the id of the store's API) every node has a number the Nextcloud clients keep as a
-- 64-bit integer (oc:fileid, oc:id). Unchanged by renames, moves and restores from the trash;
-- a copy is a new node with a new number; never reused, deleting the highest included.
-- Existing nodes get their rowid (distinct); new ones the next value of a counter that only
-- grows (a bare rowid would come back after the highest node is deleted), set by a trigger so
-- every INSERT of a node gets one without naming the column. PostgreSQL takes a sequence.
ALTER TABLE nodes ADD COLUMN file_id INTEGER;
UPDATE nodes SET file_id = rowid;
CREATE UNIQUE INDEX nodes_file_id ON nodes(file_id);
CREATE TABLE node_file_id_counter (last INTEGER NOT NULL);
INSERT INTO node_file_id_counter (last) SELECT COALESCE(MAX(file_id), 0) FROM nodes;
CREATE TRIGGER nodes_file_id AFTER INSERT ON nodes WHEN NEW.file_id IS NULL
BEGIN
  UPDATE node_file_id_counter SET last = last + 1;
  UPDATE nodes SET file_id = (SELECT last FROM node_file_id_counter) WHERE rowid = NEW.rowid;
END;
