/**
 * /groups (issue 24 item 6): the person's groups (GET /api/groups) with their role in each; a
 * group's name leads to /groups/<uuid>, its administration (group-admin.tsx).
 */
import { groupsApi } from '../api/admin.js';
import { useResource } from '../api/use-resource.js';
import { FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { Link } from '../router.js';
import { t } from '../strings/index.js';

export function Groups() {
  const { data: groups, error } = useResource(groupsApi.mine, []);
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
