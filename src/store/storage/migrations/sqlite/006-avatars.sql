-- Avatars of users and groups: the image itself (PNG or JPEG, checked by its bytes), served at
-- /avatars/<owner uuid>/<version>. `version` is derived from the bytes, so the URL changes with
-- the picture and may be cached for ever. The users.avatar column (always '') goes.
CREATE TABLE avatars (
  owner_uuid   TEXT PRIMARY KEY,                 -- a user or a group
  content_type TEXT NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg')),
  bytes        BLOB NOT NULL,
  version      TEXT NOT NULL,
  updated      INTEGER NOT NULL
);
ALTER TABLE users DROP COLUMN avatar;
