/**
 * /groups (issue 24 item 6): the person's groups (GET /api/groups) with their role in each; a
 * group's name leads to /groups/<uuid>, its administration (group-admin.tsx).
 */
import { useEffect, useState } from 'preact/hooks';
import { errorText } from '../api/client.js';
import { groupsApi, type GroupEntry } from '../api/admin.js';
import { FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { Link } from '../router.js';
import { t } from '../strings/index.js';

export function Groups() {
  const [groups, setGroups] = useState<GroupEntry[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => void groupsApi.mine().then(setGroups, (err: unknown) => setError(errorText(err))), []);
  return (
    <Page title={t.admin.groups.title}>
      <FormError text={error} />
      {groups === undefined ? (
        !error && <p>{t.loading}</p>
      ) : groups.length === 0 ? (
        <p>{t.admin.groups.none}</p>
      ) : (
        <ul class="admin-list">
          {groups.map((group) => (
            <li key={group.group_uuid}>
              <Link href={`/groups/${group.group_uuid}`}>{group.group_name}</Link> <span class="muted">{group.is_admin ? t.admin.groups.roleAdmin : t.admin.groups.roleMember}</span>
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}
