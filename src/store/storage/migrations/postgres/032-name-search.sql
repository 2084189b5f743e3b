-- Search by name (issue 32, docs/extensions.md "Search"): an index that answers `LIKE '%part%'`
-- and `LIKE 'prefix%'` on the lower-cased name, so a search is not a walk of the tree. pg_trgm
-- ships with PostgreSQL (Debian's postgresql-15 included) and is a trusted extension: the
-- database's owner may create it. Where it cannot be created (no privilege, not installed), a
-- B-tree on the same expression still answers prefixes; substrings are then a scan of the
-- caller's nodes. An index is kept in step with every write of a name by PostgreSQL itself.
DO $$
BEGIN
  BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
  EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported THEN
    RAISE NOTICE 'pg_trgm is not available: name search answers substrings by a scan';
  END;
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    EXECUTE 'CREATE INDEX nodes_name_search ON nodes USING gin (LOWER(name) gin_trgm_ops)';
  ELSE
    EXECUTE 'CREATE INDEX nodes_name_search ON nodes (LOWER(name) text_pattern_ops)';
  END IF;
END
$$;
