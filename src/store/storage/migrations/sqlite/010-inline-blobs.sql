-- Small blobs live inside the database (blobs.data): storing a 4 KiB file then costs one row in
-- the upload's own transaction, made durable by the WAL fsync the request waits for anyway,
-- instead of a temp file, its fsync, a rename and a directory fsync. NULL for blobs kept as files
-- (every blob written before this migration, and every larger one).
ALTER TABLE blobs ADD COLUMN data BLOB;
