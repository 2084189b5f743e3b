-- Sessions of the web app (routes/web-session.ts; docs/security.md "Sessions of the web app"):
-- they also end after `idle_sec` seconds without a call. `seen` is when one was last used
-- (written at most once a minute); both stay NULL for every other session (a SPEC login's
-- token lives its whole `expires`, as before).
ALTER TABLE sessions ADD COLUMN idle_sec INTEGER;
ALTER TABLE sessions ADD COLUMN seen BIGINT;
