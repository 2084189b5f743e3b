-- Change notifications for the caches of every instance (docs/scale-out.md "Caches across
-- instances"): statement triggers announce on channel driveway_changes which folders' listings a
-- statement changed. PostgreSQL delivers a transaction's notifications only when it commits (a
-- rolled-back or retried attempt announces nothing) and merges identical ones, so a transaction
-- sends a few short messages whatever route or operation made it. Words, space-separated:
--   <uuid>             a folder whose children changed (added, removed, renamed, rewritten)
--   <kind>:<owner>     the same folder as the bridge names a top-level one (home:<user uuid>)
--   favorites:<user>   that user's starred view
--   *                  anything may have changed (shares, memberships, groups; or too many folders)
--   !props             dead properties or client mtimes changed
-- A payload stays far below PostgreSQL's 8000-byte limit: beyond 64 folders a statement says '*'.
-- (Version 013 is left to the shared-state migration written at the same time.)

CREATE FUNCTION driveway_announce_folders(parents TEXT[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  payload TEXT;
BEGIN
  IF parents IS NULL OR cardinality(parents) = 0 THEN
    RETURN;
  END IF;
  IF cardinality(parents) > 64 THEN
    PERFORM pg_notify('driveway_changes', '*');
    RETURN;
  END IF;
  SELECT string_agg(k, ' ') INTO payload FROM (
    SELECT unnest(parents) AS k
    UNION
    SELECT n.top_kind || ':' || n.owner_uuid FROM nodes n WHERE n.uuid = ANY(parents) AND n.top_kind IS NOT NULL
  ) words;
  PERFORM pg_notify('driveway_changes', CASE WHEN octet_length(payload) > 7900 THEN '*' ELSE payload END);
END $$;

-- One function for the three events: each trigger names its transition tables (PostgreSQL allows
-- them only on single-event triggers), and a branch reads only the ones its event has.
CREATE FUNCTION driveway_nodes_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  parents TEXT[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(DISTINCT parent_uuid) INTO parents FROM new_rows WHERE parent_uuid IS NOT NULL;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT array_agg(DISTINCT parent_uuid) INTO parents FROM old_rows WHERE parent_uuid IS NOT NULL;
  ELSE
    SELECT array_agg(DISTINCT p) INTO parents FROM (
      SELECT parent_uuid AS p FROM old_rows UNION SELECT parent_uuid FROM new_rows
    ) both_sides WHERE p IS NOT NULL;
  END IF;
  PERFORM driveway_announce_folders(parents);
  RETURN NULL;
END $$;
CREATE TRIGGER driveway_nodes_inserted AFTER INSERT ON nodes REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION driveway_nodes_changed();
CREATE TRIGGER driveway_nodes_updated AFTER UPDATE ON nodes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION driveway_nodes_changed();
CREATE TRIGGER driveway_nodes_deleted AFTER DELETE ON nodes REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION driveway_nodes_changed();

CREATE FUNCTION driveway_stars_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  payload TEXT;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT string_agg(DISTINCT 'favorites:' || user_uuid, ' ') INTO payload FROM new_rows;
  ELSE
    SELECT string_agg(DISTINCT 'favorites:' || user_uuid, ' ') INTO payload FROM old_rows;
  END IF;
  IF payload IS NOT NULL THEN
    PERFORM pg_notify('driveway_changes', CASE WHEN octet_length(payload) > 7900 THEN '*' ELSE payload END);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER driveway_stars_inserted AFTER INSERT ON stars REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION driveway_stars_changed();
CREATE TRIGGER driveway_stars_deleted AFTER DELETE ON stars REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION driveway_stars_changed();

-- Who may do what, and the views made of it (private and public shares, shared with you,
-- incoming, /groups/, WebDrive): rare writes, so every cache goes.
CREATE FUNCTION driveway_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('driveway_changes', '*');
  RETURN NULL;
END $$;
CREATE TRIGGER driveway_shares_changed AFTER INSERT OR UPDATE OR DELETE ON shares FOR EACH STATEMENT EXECUTE FUNCTION driveway_access_changed();
CREATE TRIGGER driveway_share_recipients_changed AFTER INSERT OR UPDATE OR DELETE ON share_recipients FOR EACH STATEMENT EXECUTE FUNCTION driveway_access_changed();
CREATE TRIGGER driveway_incoming_shares_changed AFTER INSERT OR UPDATE OR DELETE ON incoming_shares FOR EACH STATEMENT EXECUTE FUNCTION driveway_access_changed();
CREATE TRIGGER driveway_group_members_changed AFTER INSERT OR UPDATE OR DELETE ON group_members FOR EACH STATEMENT EXECUTE FUNCTION driveway_access_changed();
CREATE TRIGGER driveway_webdrive_endpoints_changed AFTER INSERT OR UPDATE OR DELETE ON webdrive_endpoints FOR EACH STATEMENT EXECUTE FUNCTION driveway_access_changed();
-- Not UPDATE of disk_used, which every write into a group's tree makes.
CREATE TRIGGER driveway_groups_changed AFTER INSERT OR DELETE OR UPDATE OF name ON groups FOR EACH STATEMENT EXECUTE FUNCTION driveway_access_changed();

CREATE FUNCTION driveway_properties_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('driveway_changes', '!props');
  RETURN NULL;
END $$;
CREATE TRIGGER driveway_dav_properties_changed AFTER INSERT OR UPDATE OR DELETE ON dav_properties FOR EACH STATEMENT EXECUTE FUNCTION driveway_properties_changed();
CREATE TRIGGER driveway_dav_client_mtimes_changed AFTER INSERT OR UPDATE OR DELETE ON dav_client_mtimes FOR EACH STATEMENT EXECUTE FUNCTION driveway_properties_changed();
