-- PostgreSQL's folder announcements now say whether the in-process bridge wrote them (see the
-- PostgreSQL migration of this number). SQLite has no triggers of that kind in the schema: its
-- announcements are the connection's TEMP triggers (storage/dialects/sqlite-changes.ts), which
-- tell the bridge's transactions apart already. Nothing changes in this schema.
SELECT 1;
