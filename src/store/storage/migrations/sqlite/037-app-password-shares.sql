-- An app password may carry one extra right, chosen when it is made: its sessions may make,
-- change and remove shares (policy.ts `appPassword: 'with-share-right'`; docs/security.md). The
-- login flow asks for it for the Nextcloud apps; every earlier app password has it not (0).
ALTER TABLE app_passwords ADD COLUMN may_share INTEGER NOT NULL DEFAULT 0;
