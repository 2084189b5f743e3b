-- The WebDAV bridge's state, as sqlite/012 (read its comments): locks as leases, dead properties
-- and client mtimes, and their budgets. The usage rows are kept by PL/pgSQL triggers, as SQLite's
-- are by SQL triggers, so the accounting is one rule in the schema for both dialects and exact
-- whatever statement inserts, updates or deletes rows (an INSERT ... SELECT of a COPY, a sweep).
-- Bytes are octet_length, which is UTF-8 bytes in a UTF8 database (the only encoding supported).
CREATE TABLE dav_locks (
  token       TEXT PRIMARY KEY,
  resource    TEXT NOT NULL,
  parent      TEXT NOT NULL,
  chain       TEXT NOT NULL,
  root_href   TEXT NOT NULL,
  scope       TEXT NOT NULL CHECK (scope IN ('exclusive', 'shared')),
  depth       TEXT NOT NULL CHECK (depth IN ('0', 'infinity')),
  owner_xml   TEXT,
  principal   TEXT NOT NULL CHECK (principal <> ''),
  timeout_sec BIGINT NOT NULL,
  created_ms  BIGINT NOT NULL,
  expires_ms  BIGINT NOT NULL,
  bytes       BIGINT NOT NULL
);
CREATE INDEX dav_locks_resource ON dav_locks(resource);
CREATE INDEX dav_locks_parent ON dav_locks(parent);
CREATE INDEX dav_locks_expires ON dav_locks(expires_ms);
CREATE TABLE dav_lock_members (
  member TEXT NOT NULL,
  token  TEXT NOT NULL,
  PRIMARY KEY (member, token)
);
CREATE INDEX dav_lock_members_token ON dav_lock_members(token);
CREATE TABLE dav_lock_usage (
  principal TEXT PRIMARY KEY,
  locks     BIGINT NOT NULL,
  bytes     BIGINT NOT NULL
);
CREATE FUNCTION dav_locks_account() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO dav_lock_usage AS u (principal, locks, bytes) VALUES (NEW.principal, 1, NEW.bytes), ('', 1, NEW.bytes)
      ON CONFLICT (principal) DO UPDATE SET locks = u.locks + 1, bytes = u.bytes + EXCLUDED.bytes;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE dav_lock_usage SET locks = locks - 1, bytes = bytes - OLD.bytes WHERE principal IN (OLD.principal, '');
  ELSIF NEW.bytes <> OLD.bytes THEN
    UPDATE dav_lock_usage SET bytes = bytes - OLD.bytes + NEW.bytes WHERE principal IN (NEW.principal, '');
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER dav_locks_account AFTER INSERT OR UPDATE OR DELETE ON dav_locks FOR EACH ROW EXECUTE FUNCTION dav_locks_account();

CREATE TABLE dav_properties (
  node_id TEXT NOT NULL,
  ns      TEXT NOT NULL,
  local   TEXT NOT NULL,
  xml     TEXT NOT NULL,
  owner   TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (node_id, ns, local)
);
CREATE TABLE dav_property_usage (
  owner TEXT PRIMARY KEY,
  bytes BIGINT NOT NULL
);
CREATE FUNCTION dav_properties_account() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE dav_property_usage SET bytes = bytes - (octet_length(OLD.xml) + octet_length(OLD.ns) + octet_length(OLD.local)) WHERE owner = OLD.owner;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO dav_property_usage AS u (owner, bytes) VALUES (NEW.owner, octet_length(NEW.xml) + octet_length(NEW.ns) + octet_length(NEW.local))
      ON CONFLICT (owner) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER dav_properties_account AFTER INSERT OR UPDATE OR DELETE ON dav_properties FOR EACH ROW EXECUTE FUNCTION dav_properties_account();
CREATE TABLE dav_client_mtimes (
  node_id  TEXT PRIMARY KEY,
  mtime_ms BIGINT NOT NULL
);
