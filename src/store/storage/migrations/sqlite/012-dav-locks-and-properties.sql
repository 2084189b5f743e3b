-- The WebDAV bridge's state (src/bridge/locks.ts, dead-properties.ts), in the database every
-- instance shares (docs/scale-out.md "Bridge state"): write locks as leases (like sabre/dav's
-- lock table: a row expires by itself at expires_ms; every read ignores expired rows and they are
-- swept now and then), dead properties and client mtimes per node key, and the byte budgets of
-- both, kept exact by triggers in the same transaction as every change. A bridge running alone
-- (`--only bridge`) keeps the same tables in its own bridge.sqlite.
--
-- Keys (resource, member, node_id) are the bridge's node keys: a node UUID, or a top-level id.
CREATE TABLE dav_locks (
  token       TEXT PRIMARY KEY,             -- opaquelocktoken:<uuid>
  resource    TEXT NOT NULL,                -- the lock root
  parent      TEXT NOT NULL,                -- the key before it in chain ('' for a top-level root)
  chain       TEXT NOT NULL,                -- JSON array of keys, root first, resource last
  root_href   TEXT NOT NULL,                -- DAV:lockroot as requested
  scope       TEXT NOT NULL CHECK (scope IN ('exclusive', 'shared')),
  depth       TEXT NOT NULL CHECK (depth IN ('0', 'infinity')),
  owner_xml   TEXT,                         -- the client's DAV:owner, verbatim
  principal   TEXT NOT NULL CHECK (principal <> ''),   -- the store user who took it
  timeout_sec INTEGER NOT NULL,
  created_ms  INTEGER NOT NULL,
  expires_ms  INTEGER NOT NULL,
  bytes       INTEGER NOT NULL              -- what it is charged against the lock budgets
);
CREATE INDEX dav_locks_resource ON dav_locks(resource);
CREATE INDEX dav_locks_parent ON dav_locks(parent);
CREATE INDEX dav_locks_expires ON dav_locks(expires_ms);
-- Every key of each lock's chain: the locks at or below a key (a depth-infinity conflict, a
-- DELETE or MOVE of a collection) are found through it.
CREATE TABLE dav_lock_members (
  member TEXT NOT NULL,
  token  TEXT NOT NULL,
  PRIMARY KEY (member, token)
) WITHOUT ROWID;
CREATE INDEX dav_lock_members_token ON dav_lock_members(token);
-- Rows (expired ones too, until swept) and bytes per principal; '' holds the totals.
CREATE TABLE dav_lock_usage (
  principal TEXT PRIMARY KEY,
  locks     INTEGER NOT NULL,
  bytes     INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER dav_locks_charge AFTER INSERT ON dav_locks BEGIN
  INSERT INTO dav_lock_usage (principal, locks, bytes) SELECT NEW.principal, 0, 0 WHERE NOT EXISTS (SELECT 1 FROM dav_lock_usage WHERE principal = NEW.principal);
  INSERT INTO dav_lock_usage (principal, locks, bytes) SELECT '', 0, 0 WHERE NOT EXISTS (SELECT 1 FROM dav_lock_usage WHERE principal = '');
  UPDATE dav_lock_usage SET locks = locks + 1, bytes = bytes + NEW.bytes WHERE principal IN (NEW.principal, '');
END;
CREATE TRIGGER dav_locks_refund AFTER DELETE ON dav_locks BEGIN
  UPDATE dav_lock_usage SET locks = locks - 1, bytes = bytes - OLD.bytes WHERE principal IN (OLD.principal, '');
END;
CREATE TRIGGER dav_locks_recharge AFTER UPDATE OF bytes ON dav_locks BEGIN
  UPDATE dav_lock_usage SET bytes = bytes - OLD.bytes + NEW.bytes WHERE principal IN (NEW.principal, '');
END;

-- Dead properties (RFC 4918 §4): the whole element as the client sent it, charged to the owner
-- of the node ('' = nobody); a property's bytes are its xml, ns and local in UTF-8.
CREATE TABLE dav_properties (
  node_id TEXT NOT NULL,
  ns      TEXT NOT NULL,
  local   TEXT NOT NULL,
  xml     TEXT NOT NULL,
  owner   TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (node_id, ns, local)
) WITHOUT ROWID;
CREATE TABLE dav_property_usage (
  owner TEXT PRIMARY KEY,
  bytes INTEGER NOT NULL
) WITHOUT ROWID;
-- No conflict clause inside the triggers: the outer statement's (PROPPATCH's upsert) would override it.
CREATE TRIGGER dav_properties_charge AFTER INSERT ON dav_properties BEGIN
  INSERT INTO dav_property_usage (owner, bytes) SELECT NEW.owner, 0 WHERE NOT EXISTS (SELECT 1 FROM dav_property_usage WHERE owner = NEW.owner);
  UPDATE dav_property_usage SET bytes = bytes + length(CAST(NEW.xml AS BLOB)) + length(CAST(NEW.ns AS BLOB)) + length(CAST(NEW.local AS BLOB)) WHERE owner = NEW.owner;
END;
CREATE TRIGGER dav_properties_refund AFTER DELETE ON dav_properties BEGIN
  UPDATE dav_property_usage SET bytes = bytes - (length(CAST(OLD.xml AS BLOB)) + length(CAST(OLD.ns AS BLOB)) + length(CAST(OLD.local AS BLOB))) WHERE owner = OLD.owner;
END;
CREATE TRIGGER dav_properties_recharge AFTER UPDATE ON dav_properties BEGIN
  UPDATE dav_property_usage SET bytes = bytes - (length(CAST(OLD.xml AS BLOB)) + length(CAST(OLD.ns AS BLOB)) + length(CAST(OLD.local AS BLOB))) WHERE owner = OLD.owner;
  INSERT INTO dav_property_usage (owner, bytes) SELECT NEW.owner, 0 WHERE NOT EXISTS (SELECT 1 FROM dav_property_usage WHERE owner = NEW.owner);
  UPDATE dav_property_usage SET bytes = bytes + length(CAST(NEW.xml AS BLOB)) + length(CAST(NEW.ns AS BLOB)) + length(CAST(NEW.local AS BLOB)) WHERE owner = NEW.owner;
END;
-- Modification times clients set (X-OC-Mtime, Win32LastModifiedTime, SAR:lastmodified).
CREATE TABLE dav_client_mtimes (
  node_id  TEXT PRIMARY KEY,
  mtime_ms INTEGER NOT NULL
) WITHOUT ROWID;
