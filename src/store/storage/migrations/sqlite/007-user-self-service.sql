-- Current-user self-service (issue 6): password age, notification settings, the TOTP replay
-- guard, app passwords and the sessions they open, and a login history index for pruning.

-- When the password was last set (pass_expires = this + store.passwordMaxAgeDays). Rows from
-- before this migration count from their last update, the latest time a reset could have been.
ALTER TABLE users ADD COLUMN password_changed INTEGER NOT NULL DEFAULT 0;
UPDATE users SET password_changed = updated;

-- Notification settings the user changed, as a JSON object of booleans; a missing key has its
-- documented default (ops/notifications.ts), so a changed default reaches everyone who kept it.
ALTER TABLE users ADD COLUMN notifications TEXT NOT NULL DEFAULT '{}';

-- The TOTP time step (RFC 6238 T) of the last accepted code: a code is good only for a later step.
ALTER TABLE users ADD COLUMN twofa_last_step INTEGER;

CREATE TABLE app_passwords (
  uuid          TEXT PRIMARY KEY,
  user_uuid     TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  secret_hash   TEXT NOT NULL UNIQUE,                    -- sha256 (hex) of the password; it is never stored
  created       INTEGER NOT NULL,
  last_used     INTEGER                                  -- last login with it
);
CREATE INDEX app_passwords_user ON app_passwords(user_uuid);

-- The app password a session was opened with (NULL: the account password). No foreign key: a
-- revoked session keeps naming the app password it came from after that row is deleted.
ALTER TABLE sessions ADD COLUMN app_password_uuid TEXT;
CREATE INDEX sessions_app_password ON sessions(app_password_uuid) WHERE app_password_uuid IS NOT NULL;

-- History is read and pruned per user newest first, by id (insertion order): the rowid that
-- ends every index entry serves that ordering; the timestamp column added nothing.
DROP INDEX login_events_user;
CREATE INDEX login_events_user ON login_events(user_uuid);
