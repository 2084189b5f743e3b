-- Search by name (issue 32, docs/extensions.md "Search"): a trigram index of every node's name,
-- so `LIKE '%part%'` and `LIKE 'prefix%'` are answered from the index instead of a walk of the
-- tree. FTS5's trigram tokenizer folds case (Unicode), and answers LIKE and GLOB itself when the
-- pattern has three characters in a row. The row id is the node's file id (migration 025: never
-- reused, unchanged by VACUUM, unlike a rowid). Triggers keep it in step with every write of a
-- name, whatever does it (create, copy, rename, move onto a new name, trash and restore under
-- another name, delete, migration): nothing else writes it.
CREATE VIRTUAL TABLE node_names USING fts5(name, tokenize = 'trigram');
INSERT INTO node_names (rowid, name) SELECT file_id, name FROM nodes WHERE file_id IS NOT NULL;
-- A node gets its file id from the trigger of migration 025 (an UPDATE after the INSERT), or in
-- the INSERT itself when a copy between databases names it.
CREATE TRIGGER node_names_insert AFTER INSERT ON nodes WHEN NEW.file_id IS NOT NULL
BEGIN
  INSERT INTO node_names (rowid, name) VALUES (NEW.file_id, NEW.name);
END;
CREATE TRIGGER node_names_update AFTER UPDATE OF name, file_id ON nodes
  WHEN NEW.file_id IS NOT NULL AND (OLD.file_id IS NOT NEW.file_id OR OLD.name IS NOT NEW.name)
BEGIN
  DELETE FROM node_names WHERE rowid = OLD.file_id;
  INSERT INTO node_names (rowid, name) VALUES (NEW.file_id, NEW.name);
END;
CREATE TRIGGER node_names_delete AFTER DELETE ON nodes WHEN OLD.file_id IS NOT NULL
BEGIN
  DELETE FROM node_names WHERE rowid = OLD.file_id;
END;
