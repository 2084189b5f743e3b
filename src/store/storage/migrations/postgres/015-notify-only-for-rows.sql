-- 014's triggers on access and property tables fired FOR EACH STATEMENT, so a statement that
-- touched no row (a PUT's "DELETE FROM shares WHERE node_uuid = ?" on a file never shared) still
-- told every instance to drop all its caches, its own included: on PostgreSQL the bridge's
-- listings rarely survived a write (found by bridge/copy.test.ts: a COPY found no cached source
-- tree to copy its members' dead properties from). Row triggers fire only for rows; PostgreSQL
-- folds the identical notifications of one transaction into one.
DROP TRIGGER driveway_shares_changed ON shares;
DROP TRIGGER driveway_share_recipients_changed ON share_recipients;
DROP TRIGGER driveway_incoming_shares_changed ON incoming_shares;
DROP TRIGGER driveway_group_members_changed ON group_members;
DROP TRIGGER driveway_webdrive_endpoints_changed ON webdrive_endpoints;
DROP TRIGGER driveway_groups_changed ON groups;
DROP TRIGGER driveway_dav_properties_changed ON dav_properties;
DROP TRIGGER driveway_dav_client_mtimes_changed ON dav_client_mtimes;
CREATE TRIGGER driveway_shares_changed AFTER INSERT OR UPDATE OR DELETE ON shares FOR EACH ROW EXECUTE FUNCTION driveway_access_changed();
CREATE TRIGGER driveway_share_recipients_changed AFTER INSERT OR UPDATE OR DELETE ON share_recipients FOR EACH ROW EXECUTE FUNCTION driveway_access_changed();
CREATE TRIGGER driveway_incoming_shares_changed AFTER INSERT OR UPDATE OR DELETE ON incoming_shares FOR EACH ROW EXECUTE FUNCTION driveway_access_changed();
CREATE TRIGGER driveway_group_members_changed AFTER INSERT OR UPDATE OR DELETE ON group_members FOR EACH ROW EXECUTE FUNCTION driveway_access_changed();
CREATE TRIGGER driveway_webdrive_endpoints_changed AFTER INSERT OR UPDATE OR DELETE ON webdrive_endpoints FOR EACH ROW EXECUTE FUNCTION driveway_access_changed();
-- Not UPDATE of disk_used, which every write into a group's tree makes.
CREATE TRIGGER driveway_groups_changed AFTER INSERT OR DELETE OR UPDATE OF name ON groups FOR EACH ROW EXECUTE FUNCTION driveway_access_changed();
CREATE TRIGGER driveway_dav_properties_changed AFTER INSERT OR UPDATE OR DELETE ON dav_properties FOR EACH ROW EXECUTE FUNCTION driveway_properties_changed();
CREATE TRIGGER driveway_dav_client_mtimes_changed AFTER INSERT OR UPDATE OR DELETE ON dav_client_mtimes FOR EACH ROW EXECUTE FUNCTION driveway_properties_changed();
