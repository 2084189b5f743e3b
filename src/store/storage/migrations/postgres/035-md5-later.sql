-- A large upload's MD5 may come after its commit (ops/md5-later.ts): such a blob has its SHA-1
-- and, for a moment, no MD5. The backfill (ops/checksum-backfill.ts) now looks for `md5 IS NULL`
-- (every blob without SHA-1 lacks MD5 too), so it finishes what a stopped process left; this
-- index finds those rows as the old one found `sha1 IS NULL`.
CREATE INDEX blobs_without_md5 ON blobs(hash) WHERE md5 IS NULL;
DROP INDEX blobs_without_checksums;
