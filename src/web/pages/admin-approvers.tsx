/**
 * /admin/approvers (issue 24 item 7): who approves the shares of a user's or a group's workspace,
 * per share type (docs/api.md "Share approval"): choose the workspace, then add or remove.
 */
import { useState } from 'preact/hooks';
import { adminApi, type About, type DirectoryUser } from '../api/admin.js';
import { useResource } from '../api/use-resource.js';
import { FormError } from '../components/field.js';
import { t } from '../strings/index.js';
import { ApproverEditor } from './group-admin.js';

export function AdminApprovers({ about: _about }: { about: About }) {
  const { data, error } = useResource(async () => {
    const [users, groups] = await Promise.all([adminApi.users(), adminApi.groups()]);
    return { users, groups };
  }, []);
  const users = data?.users ?? [];
  const groups = data?.groups ?? [];
  const [workspace, setWorkspace] = useState('');
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
