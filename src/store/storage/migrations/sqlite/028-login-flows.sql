-- Login flows of the Nextcloud and ownCloud clients (bridge/nextcloud/login-flow.ts; docs/security.md
-- "Client login flows"): one row per flow a client opened, from its start until it is polled,
-- cancelled or expired (20 minutes). No token is kept, only their SHA-256; the app password
-- granted waits here sealed to a key only the poll token opens.
CREATE TABLE dav_login_flows (
  poll_key     TEXT PRIMARY KEY,          -- SHA-256 of the poll token (the client's)
  login_key    TEXT NOT NULL UNIQUE,      -- SHA-256 of the login token (in the browser's address)
  kind         TEXT NOT NULL,             -- 'v2' (polled) or 'v1' (nc:// redirect)
  client       TEXT NOT NULL,             -- the client's name: its User-Agent
  address      TEXT NOT NULL,             -- the client's address (the per-address bound)
  server       TEXT NOT NULL,             -- the bridge's address as the client reached it
  public_key   TEXT NOT NULL,             -- the flow's X25519 public key, the app password is sealed to
  sealed_key   TEXT NOT NULL,             -- its private key, sealed under the poll token
  created_ms   BIGINT NOT NULL,
  expires_ms   BIGINT NOT NULL,
  login_name   TEXT,                      -- set by the grant
  sealed_password TEXT                    -- set by the grant: the app password, sealed
);
CREATE INDEX dav_login_flows_address ON dav_login_flows(address, expires_ms);
CREATE INDEX dav_login_flows_expires ON dav_login_flows(expires_ms);
