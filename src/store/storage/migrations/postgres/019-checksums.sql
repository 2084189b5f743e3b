-- The clients' checksums of every blob (blobs/staging.ts computes them with the content
-- address; docs/extensions.md "Checksums"). On the blob, not the revision: a blob is one set of
-- bytes, however many revisions share it. NULL until known: blobs written before this version
-- get them from the backfill (ops/checksum-backfill.ts), which claims a blob by setting
-- checksum_lease (ms since epoch) so two jobs never hash the same one.
ALTER TABLE blobs ADD COLUMN sha1 TEXT;
ALTER TABLE blobs ADD COLUMN md5 TEXT;
ALTER TABLE blobs ADD COLUMN checksum_lease BIGINT;
CREATE INDEX blobs_without_checksums ON blobs(hash) WHERE sha1 IS NULL;
