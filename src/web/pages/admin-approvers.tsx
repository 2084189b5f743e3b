/**
 * /admin/approvers (issue 24 item 7): who approves the shares of a user's or a group's workspace,
 * per share type (docs/api.md "Share approval"): choose the workspace, then add or remove.
 */
import { useEffect, useState } from 'preact/hooks';
import { errorText } from '../api/client.js';
import { adminApi, type About, type AdminGroup, type AdminUser, type DirectoryUser } from '../api/admin.js';
import { FormError } from '../components/field.js';
import { t } from '../strings/index.js';
import { ApproverEditor } from './group-admin.js';

export function AdminApprovers({ about: _about }: { about: About }) {
  const [users, setUsers] = useState<AdminUser[]>([]);
  const [groups, setGroups] = useState<AdminGroup[]>([]);
  const [workspace, setWorkspace] = useState('');
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    adminApi.users().then(setUsers, (err: unknown) => setError(errorText(err)));
    adminApi.groups().then(setGroups, (err: unknown) => setError(errorText(err)));
  }, []);
  const [kind, uuid] = workspace.split(':') as ['users' | 'groups' | '', string | undefined];
  const directory: DirectoryUser[] = users.filter((user) => user.is_active);
  return (
    <>
      <p>{t.admin.approvers.intro}</p>
      <FormError text={error} />
      <div class="field">
        <label for="workspace">{t.admin.approvers.workspace}</label>
        <select id="workspace" value={workspace} onChange={(e) => setWorkspace((e.currentTarget as HTMLSelectElement).value)}>
          <option value="">{t.admin.choose}</option>
          <optgroup label={t.admin.adminGroups.users}>
            {users.map((user) => (
              <option key={user.uuid} value={`users:${user.uuid}`}>
                {user.fullname} ({user.email})
              </option>
            ))}
          </optgroup>
          <optgroup label={t.admin.adminGroups.groups}>
            {groups.map((group) => (
              <option key={group.group_uuid} value={`groups:${group.group_uuid}`}>
                {group.group_name}
              </option>
            ))}
          </optgroup>
        </select>
      </div>
      {kind && uuid && <ApproverEditor key={workspace} kind={kind} uuid={uuid} users={directory} />}
    </>
  );
}
