-- Two-factor set-up in two steps and recovery codes (ops/twofa.ts; docs/extensions.md
-- "Two-factor set-up and recovery codes"). A set-up's secret waits in the user's row until a
-- valid code from it confirms it (then it becomes twofa_secret) or it expires; a new set-up
-- replaces it. Recovery codes are kept only as SHA-256 (they carry 80 random bits), each used once.
ALTER TABLE users ADD COLUMN twofa_pending_secret TEXT;
ALTER TABLE users ADD COLUMN twofa_pending_expires BIGINT;

CREATE TABLE twofa_recovery_codes (
  user_uuid  TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
  code_hash  TEXT NOT NULL,                 -- sha256 (hex) of the code's canonical form
  created    BIGINT NOT NULL,
  used       BIGINT,                       -- when it signed someone in; NULL while unused
  PRIMARY KEY (user_uuid, code_hash)
);
