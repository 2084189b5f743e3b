-- Sessions announce their end too (word '!sessions' on driveway_changes, as 014's and 017's): an
-- instance's in-process bridge keeps the live sessions it checked while its change feed listens
-- (sessions.ts sessionMemo), so a small PUT no longer asks the database whether its session still
-- holds; a logout, a revocation, a deactivation or any change to what a session carries of its
-- user, on any instance, drops them. New sessions are not announced: an unknown session is never
-- kept. Row triggers, as 015.
CREATE TRIGGER driveway_sessions_changed AFTER UPDATE OR DELETE ON sessions
  FOR EACH ROW EXECUTE FUNCTION driveway_announce_word('!sessions');
CREATE TRIGGER driveway_session_users_changed AFTER DELETE OR UPDATE OF is_active, is_admin, is_builtin, org_id, password_changed ON users
  FOR EACH ROW EXECUTE FUNCTION driveway_announce_word('!sessions');
