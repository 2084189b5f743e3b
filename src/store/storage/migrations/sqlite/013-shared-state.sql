-- What the instances over one database must agree on, beside the rows they already share
-- (docs/scale-out.md "Shared state").
--
-- The signing keys of session tokens (store/sessions.ts): a token names its key in the JWT
-- header (`kid`); any key not retired verifies, the newest signs. The first key (kid '0') is the
-- one `<data dir>/jwt-secret` held before this migration, imported at the first start after it,
-- so the tokens signed before (which carry no kid) stay valid. Secrets are 48 random bytes,
-- base64url, as the file held them.
CREATE TABLE jwt_keys (
  kid     TEXT PRIMARY KEY,
  secret  TEXT NOT NULL,
  created INTEGER NOT NULL,
  retired INTEGER                -- when it stopped verifying; NULL while it does
);

-- Attempts counted by the login and link limiters (storage/limits.ts), one row per counted
-- attempt and counter: `scope` names the limiter and the counter ('login:account',
-- 'login:source', 'link:account', ...), `key` the username, link or address. Rows older than the
-- limiter's window are swept. Used by instances over PostgreSQL; the embedded store counts in
-- memory (one process serves a data directory) and leaves this table empty.
CREATE TABLE limit_marks (
  attempt TEXT NOT NULL,         -- one id per reserved attempt, shared by its counters
  scope   TEXT NOT NULL,
  key     TEXT NOT NULL,
  at      INTEGER NOT NULL,      -- when it was reserved (ms)
  pending INTEGER NOT NULL,      -- 1 until the attempt is settled
  PRIMARY KEY (attempt, scope)
);
CREATE INDEX limit_marks_key ON limit_marks(scope, key, at);
CREATE INDEX limit_marks_at ON limit_marks(scope, at);
