-- Upload parts held to the quota (issue 29; docs/bridge-design.md "Uploads held to the quota"):
-- what a session's parts hold or are being written counts against the quota of its `scope`
-- from the moment a part is accepted, before its bytes land, across instances.
--   scope            whose quota: the owner's id (their own drive; a v1 upload without
--                    Destination), or the group's id when the upload goes into a group's drive
--   reserved_bytes   the bytes of its parts stored and of those being written (each one's
--                    announced size, from before its write); the session holds
--                    MAX(total_bytes, reserved_bytes) of the scope's quota until it goes
--   parts_in_flight  parts accepted whose write has not ended (the cap on parts per upload)
-- Sessions already open keep counting against their owner, with what their parts hold.
ALTER TABLE dav_uploads ADD COLUMN scope TEXT NOT NULL DEFAULT '';
ALTER TABLE dav_uploads ADD COLUMN reserved_bytes BIGINT NOT NULL DEFAULT 0;
ALTER TABLE dav_uploads ADD COLUMN parts_in_flight INTEGER NOT NULL DEFAULT 0;
UPDATE dav_uploads SET scope = owner,
  reserved_bytes = COALESCE((SELECT SUM(p.size_bytes) FROM dav_upload_parts p WHERE p.upload_key = dav_uploads.upload_key), 0);
CREATE INDEX dav_uploads_scope ON dav_uploads(scope, expires_ms);
