-- Folder announcements (migrations 014 and 026) say whether the in-process bridge wrote them.
-- An instance's own writes used to be told to its bridge as `local` (already patched in its
-- caches), its REST API's too: the bridge then kept a folder's listing that the web app had just
-- changed for up to its TTL (a rename not shown; a PUT to the old name writing a version of the
-- renamed file). The bridge's transactions now set `driveway.writer` to 'bridge' for themselves
-- (storage/dialects/postgres.ts, TransactionOptions.local), and a folder announcement made inside
-- one starts with the word `~` (common/change-feed.ts BRIDGE_WRITE): only those are `local`.
CREATE FUNCTION driveway_notify_folders(payload TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF octet_length(payload) > 7900 THEN
    PERFORM pg_notify('driveway_changes', '*');
  ELSIF current_setting('driveway.writer', true) = 'bridge' THEN
    PERFORM pg_notify('driveway_changes', '~ ' || payload);
  ELSE
    PERFORM pg_notify('driveway_changes', payload);
  END IF;
END $$;

CREATE OR REPLACE FUNCTION driveway_announce_folders(parents TEXT[]) RETURNS void LANGUAGE plpgsql AS $$
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
  PERFORM driveway_notify_folders(payload);
END $$;

CREATE OR REPLACE FUNCTION driveway_tree_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  above TEXT[];
  payload TEXT;
BEGIN
  SELECT array_agg(DISTINCT r.folder_uuid) INTO above FROM new_rows r
  WHERE EXISTS (SELECT 1 FROM new_rows c JOIN nodes n ON n.uuid = c.folder_uuid WHERE n.parent_uuid = r.folder_uuid);
  IF above IS NULL OR cardinality(above) = 0 THEN
    RETURN NULL;
  END IF;
  IF cardinality(above) > 64 THEN
    PERFORM pg_notify('driveway_changes', '*');
    RETURN NULL;
  END IF;
  SELECT string_agg('^' || k, ' ') INTO payload FROM (
    SELECT unnest(above) AS k
    UNION
    SELECT n.top_kind || ':' || n.owner_uuid FROM nodes n WHERE n.uuid = ANY(above) AND n.top_kind IS NOT NULL
  ) words;
  PERFORM driveway_notify_folders(payload);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION driveway_stars_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  payload TEXT;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT string_agg(DISTINCT 'favorites:' || user_uuid, ' ') INTO payload FROM new_rows;
  ELSE
    SELECT string_agg(DISTINCT 'favorites:' || user_uuid, ' ') INTO payload FROM old_rows;
  END IF;
  IF payload IS NOT NULL THEN
    PERFORM driveway_notify_folders(payload);
  END IF;
  RETURN NULL;
END $$;
