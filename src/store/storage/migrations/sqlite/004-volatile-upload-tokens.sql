-- Upload tokens live for seconds and die with the process anyway: they move to a TEMP table
-- (database.ts), so issuing and presenting one no longer costs a durable, fsynced commit.
DROP TABLE upload_tokens;
