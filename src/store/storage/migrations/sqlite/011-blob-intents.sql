-- Intents of the blob backend (blobs/blob-backend.ts BlobLedger), what instances sharing one S3
-- bucket agree on: an upload records its intent (content hash, object key, multipart upload id,
-- expiry) before writing a byte and clears it once its row settled, so an upload abandoned by a
-- crash is found and cleaned up (its multipart upload aborted, its object deleted unless a row
-- refers to it); a delete of an unreferenced blob records a marker first, so an upload of the
-- same bytes on another instance waits for it instead of counting on an object about to go.
CREATE TABLE blob_intents (
  id        TEXT PRIMARY KEY,
  kind      TEXT NOT NULL CHECK (kind IN ('upload', 'delete')),
  hash      TEXT NOT NULL,
  key       TEXT NOT NULL,
  upload_id TEXT,                 -- the multipart upload, once created (uploads only)
  created   INTEGER NOT NULL,
  expires   INTEGER NOT NULL
);
CREATE INDEX blob_intents_hash ON blob_intents(hash);
CREATE INDEX blob_intents_expires ON blob_intents(expires);
