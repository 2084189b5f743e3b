-- Notifications (docs/api.md "Notifications"; docs/store-semantics.md "Notifications"): what
-- happened that a user should hear of, one row per user and event, written in the transaction of
-- the event (ops/notification-inbox.ts; the quota triggers below). `kind` names the event,
-- `params` (JSON) what the words about it need; the texts are made when read. Only the newest 100
-- of a user are kept (the trim trigger below).
CREATE TABLE notifications (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,        -- never reused: the OCS notification_id
  user_uuid   TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
  kind        TEXT NOT NULL,
  object_type TEXT NOT NULL,
  object_id   TEXT NOT NULL,
  params      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params)),
  created     INTEGER NOT NULL
);
CREATE INDEX notifications_user ON notifications(user_uuid, id);

CREATE TRIGGER notifications_keep_newest AFTER INSERT ON notifications BEGIN
  DELETE FROM notifications WHERE user_uuid = NEW.user_uuid
    AND id <= (SELECT id FROM notifications WHERE user_uuid = NEW.user_uuid ORDER BY id DESC LIMIT 1 OFFSET 100);
END;

-- A drive crossing 90 % of its quota (upwards, once per crossing: the statement that crossed),
-- for its user (realtime_alert_owned) or each active member of its group
-- (realtime_alert_group_owned); a setting absent from the user's row is on.
CREATE TRIGGER notifications_user_quota AFTER UPDATE OF disk_used ON users
WHEN NEW.disk_quota > 0 AND OLD.disk_used * 10 < NEW.disk_quota * 9 AND NEW.disk_used * 10 >= NEW.disk_quota * 9
  AND (NOT json_valid(NEW.notifications) OR COALESCE(json_extract(NEW.notifications, '$.realtime_alert_owned'), 1) <> 0)
BEGIN
  INSERT INTO notifications (user_uuid, kind, object_type, object_id, params, created)
  VALUES (NEW.uuid, 'quota_near', 'user', NEW.uuid, json_object('used', NEW.disk_used, 'quota', NEW.disk_quota),
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;

CREATE TRIGGER notifications_group_quota AFTER UPDATE OF disk_used ON groups
WHEN NEW.disk_quota > 0 AND OLD.disk_used * 10 < NEW.disk_quota * 9 AND NEW.disk_used * 10 >= NEW.disk_quota * 9
BEGIN
  INSERT INTO notifications (user_uuid, kind, object_type, object_id, params, created)
  SELECT u.uuid, 'quota_near', 'group', NEW.uuid, json_object('used', NEW.disk_used, 'quota', NEW.disk_quota, 'group_name', NEW.name),
         CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
  FROM group_members m JOIN users u ON u.uuid = m.user_uuid
  WHERE m.group_uuid = NEW.uuid AND u.is_active = 1
    AND (NOT json_valid(u.notifications) OR COALESCE(json_extract(u.notifications, '$.realtime_alert_group_owned'), 1) <> 0)
  ORDER BY u.uuid;
END;

-- Links whose coming expiry was announced (the sweep of ops/notification-inbox.ts), at which
-- expiry: once per link, and once more if its expiry is changed.
CREATE TABLE link_expiry_notices (
  share_uuid TEXT PRIMARY KEY REFERENCES shares(uuid) ON DELETE CASCADE,
  expires    INTEGER NOT NULL
);
