-- S3 objects that hold a blob away from its content address `blobs/<hash>` (store/blobs/s3.ts,
-- docs/bridge-design.md "Assembly"): a chunked upload's multipart object, completed where its
-- parts went and adopted as the blob rather than uploaded again. Written by the backend before
-- the row that refers to the blob (as an upload's object is), kept until the object is deleted,
-- so a blob whose last row went still names its object. No row here: `blobs/<hash>`.
CREATE TABLE blob_objects (
  hash TEXT PRIMARY KEY,
  key  TEXT NOT NULL UNIQUE
);
