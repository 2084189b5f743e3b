-- Blobs are addressed by BLAKE3 from now on (blobs/blob-store.ts says why). The columns get a
-- name that does not claim an algorithm; rows and files written before keep their SHA-256
-- addresses, which stay valid keys. RENAME COLUMN also rewrites the foreign key and the index.
ALTER TABLE blobs RENAME COLUMN sha256 TO hash;
ALTER TABLE revisions RENAME COLUMN blob_sha256 TO blob_hash;
