-- Pre-auth tokens of the push door (bridge/nextcloud/push.ts; docs/security.md "Push"): one row per
-- token a client asked for, until a websocket takes it or it expires (15 seconds, as notify_push).
-- No token is kept, only its SHA-256; what it opens is sealed under the token itself.
CREATE TABLE dav_push_tokens (
  token_key   TEXT PRIMARY KEY,   -- SHA-256 of the token
  sealed      TEXT NOT NULL,      -- the caller's credentials, sealed under the token
  expires_ms  BIGINT NOT NULL
);
CREATE INDEX dav_push_tokens_expires ON dav_push_tokens(expires_ms);
