-- "Delete for good" (docs/extensions.md "Trash and revisions from a client"): a folder marked 1
-- makes every DELETE below it remove the node for good instead of moving it to the trash (a
-- backup tool's prunes would otherwise fill the trash, which counts against the quota). A
-- group's top-level home can carry it too (the whole group drive).
ALTER TABLE nodes ADD COLUMN skip_trash SMALLINT NOT NULL DEFAULT 0;
