-- WebDAV locks announce their changes too (word '!locks' on driveway_changes, as 014's): each
-- instance keeps the answers of its lock lookups while its change feed listens
-- (storage/dav-locks.ts), so a PUT or PROPFIND no longer asks the database whether anything is
-- locked, and every change to a lock, on any instance, drops those answers. Row triggers, as 015:
-- a statement that changed no lock says nothing; one transaction's identical notifications merge.
-- driveway_announce_word() announces the word its trigger names (018 uses it too).
CREATE FUNCTION driveway_announce_word() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('driveway_changes', TG_ARGV[0]);
  RETURN NULL;
END $$;
CREATE TRIGGER driveway_dav_locks_changed AFTER INSERT OR UPDATE OR DELETE ON dav_locks
  FOR EACH ROW EXECUTE FUNCTION driveway_announce_word('!locks');
