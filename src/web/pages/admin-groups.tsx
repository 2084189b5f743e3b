/**
 * /admin/groups (issue 24 item 7): the organization's groups; create one (name, quota); per
 * group: its quota, its members (add with their permissions, remove; as an administrator, member
 * or not, through /api/admin/groups/.../users), and delete with a transfer of its files to a
 * user or group the administrator chooses (the store puts them in a folder named after the group
 * in the receiver's home), or without one after a confirmation.
 */
import { useState } from 'preact/hooks';
import { ApiError, errorText } from '../api/client.js';
import { adminApi, quotaErrorText, type About, type AdminGroup, type AdminUser, type Permissions } from '../api/admin.js';
import { useResource } from '../api/use-resource.js';
import { OrganizationPicker } from '../components/builtin-admin.js';
import { Field, FormError } from '../components/field.js';
import { Link } from '../router.js';
import { t } from '../strings/index.js';
import { bytesToMebibytes, mebibytesToBytes, sizeText } from '../strings/units.js';
import { NEW_MEMBER, PermissionBoxes, permissionSummary } from './group-admin.js';

const s = () => t.admin.adminGroups;

function GroupRow({ group, groups, users, onChanged, onDeleted }: { group: AdminGroup; groups: AdminGroup[]; users: AdminUser[]; onChanged: () => void; onDeleted: (message: string) => void }) {
  const [quota, setQuota] = useState(group.disk_quota > 0 ? bytesToMebibytes(group.disk_quota) : '0');
  // The members load when the row is first opened, then after each change.
  const [opened, setOpened] = useState(false);
  const { data: members, error: membersError, refresh: loadMembers } = useResource(() => (opened ? adminApi.groupMembers(group.group_uuid) : Promise.resolve(undefined)), [opened, group.group_uuid]);
  const [adding, setAdding] = useState('');
  const [perms, setPerms] = useState<Permissions>({ ...NEW_MEMBER });
  const [transfer, setTransfer] = useState('');
  const [confirm, setConfirm] = useState(false);
  const [problems, setProblems] = useState<{ quota?: string | undefined; member?: string | undefined; delete?: string | undefined }>({});
  const [done, setDone] = useState('');
  const id = group.group_uuid;
  const run = async (work: () => Promise<unknown>, message: string, field: 'quota' | 'member' | 'delete') => {
    setProblems({});
    setDone('');
    try {
      await work();
      setDone(message);
      onChanged();
    } catch (err) {
      setProblems({ [field]: field === 'quota' ? quotaErrorText(err) : errorText(err) });
    }
  };
  const setQuotaNow = (event: Event) => {
    event.preventDefault();
    const bytes = mebibytesToBytes(quota);
    if (Number.isNaN(bytes)) return setProblems({ quota: t.admin.users.quotaInvalid });
    void run(() => adminApi.updateGroup(id, { disk_quota: bytes }), t.admin.users.quotaSaved, 'quota');
  };
  const add = (event: Event) => {
    event.preventDefault();
    if (!adding) return setProblems({ member: t.admin.group.chooseUser });
    void run(() => adminApi.addGroupMember(id, adding, perms).then(() => (setAdding(''), setPerms({ ...NEW_MEMBER }), loadMembers())), s().memberAdded, 'member');
  };
  const remove = (event: Event) => {
    event.preventDefault();
    if (!transfer && !confirm) return setProblems({ delete: s().confirmNeeded });
    setProblems({});
    // The row goes with the group: the list says what became of it.
    adminApi.deleteGroup(id, transfer || undefined).then(
      (answer) => onDeleted(answer?.folder ? s().deletedTo(group.group_name, answer.folder, [...users.map((u) => [u.uuid, u.fullname]), ...groups.map((g) => [g.group_uuid, g.group_name])].find(([uuid]) => uuid === answer.transferred_to)?.[1] ?? '') : s().deleted(group.group_name)),
      (err: unknown) => setProblems({ delete: errorText(err) }),
    );
  };
  return (
    <li>
      <details onToggle={(e) => (e.currentTarget as HTMLDetailsElement).open && setOpened(true)}>
        <summary>
          {group.group_name} <span class="muted">{s().summary(group.member_count, group.disk_quota > 0 ? t.admin.users.usedOf(sizeText(group.disk_used), sizeText(group.disk_quota)) : t.admin.users.usedUnlimited(sizeText(group.disk_used)))}</span>
        </summary>
        <p>
          <Link href={`/groups/${id}`}>{s().open(group.group_name)}</Link>
        </p>
        <form onSubmit={setQuotaNow} noValidate>
          <Field id={`gquota-${id}`} label={t.admin.users.quotaOf(group.group_name)} hint={s().quotaHint} inputMode="decimal" value={quota} onValue={setQuota} error={problems.quota} />
          <button type="submit">{t.admin.users.setQuota}</button>
        </form>
        <h3>{t.admin.group.members}</h3>
        <FormError text={membersError} />
        {members === undefined ? (
          !membersError && <p>{t.loading}</p>
        ) : members.length === 0 ? (
          <p>{s().noMembers}</p>
        ) : (
          <ul class="admin-list">
            {members.map((member) => (
              <li key={member.user_uuid}>
                {member.fullname} <span class="muted">{permissionSummary(member)}</span>{' '}
                <button
                  type="button"
                  class="secondary"
                  aria-label={t.admin.group.removeMemberOf(member.fullname)}
                  onClick={() => void run(() => adminApi.removeGroupMember(id, member.user_uuid).then(loadMembers), s().memberRemoved, 'member')}
                >
                  {t.admin.group.removeMember}
                </button>
              </li>
            ))}
          </ul>
        )}
        <form onSubmit={add} noValidate>
          <div class="field">
            <label for={`gadd-${id}`}>{s().addMemberTo(group.group_name)}</label>
            <select id={`gadd-${id}`} value={adding} onChange={(e) => setAdding((e.currentTarget as HTMLSelectElement).value)}>
              <option value="">{t.admin.choose}</option>
              {users
                .filter((user) => !members?.some((m) => m.user_uuid === user.uuid))
                .map((user) => (
                  <option key={user.uuid} value={user.uuid}>
                    {user.fullname} ({user.email})
                  </option>
                ))}
            </select>
          </div>
          <PermissionBoxes id={`gperm-${id}`} value={perms} onChange={setPerms} />
          <FormError text={problems.member} />
          <button type="submit">{t.admin.group.addMember}</button>
        </form>
        <form onSubmit={remove} noValidate class="danger-zone">
          <h3>{s().delete}</h3>
          <div class="field">
            <label for={`gtransfer-${id}`}>{s().transferTo(group.group_name)}</label>
            <select id={`gtransfer-${id}`} value={transfer} onChange={(e) => setTransfer((e.currentTarget as HTMLSelectElement).value)}>
              <option value="">{s().noTransfer}</option>
              <optgroup label={s().users}>
                {users.map((user) => (
                  <option key={user.uuid} value={user.uuid}>
                    {user.fullname} ({user.email})
                  </option>
                ))}
              </optgroup>
              <optgroup label={s().groups}>
                {groups
                  .filter((other) => other.group_uuid !== id)
                  .map((other) => (
                    <option key={other.group_uuid} value={other.group_uuid}>
                      {other.group_name}
                    </option>
                  ))}
              </optgroup>
            </select>
          </div>
          {!transfer && (
            <div class="check">
              <input type="checkbox" id={`gconfirm-${id}`} checked={confirm} onChange={(e) => setConfirm((e.currentTarget as HTMLInputElement).checked)} />
              <label for={`gconfirm-${id}`}>{s().confirm(group.group_name)}</label>
            </div>
          )}
          <FormError text={problems.delete} />
          <button type="submit" class="danger">
            {s().deleteOf(group.group_name)}
          </button>
        </form>
        <p role="status">{done}</p>
      </details>
    </li>
  );
}

export function AdminGroups({ about }: { about: About }) {
  const [orgId, setOrgId] = useState<string | undefined>();
  const { data, error: listError, refresh: load } = useResource(async () => {
    const [groups, users] = await Promise.all([adminApi.groups(orgId), adminApi.users(orgId).catch(() => [] as AdminUser[])]);
    return { groups, users };
  }, [orgId]);
  const groups = data?.groups;
  const users = data?.users ?? [];
  const [form, setForm] = useState({ name: '', quota: '0' });
  const [problems, setProblems] = useState<{ name?: string | undefined; quota?: string | undefined; form?: string | undefined }>({});
  const [done, setDone] = useState('');
  const [deleted, setDeleted] = useState('');
  const create = async (event: Event) => {
    event.preventDefault();
    setDone('');
    const disk_quota = mebibytesToBytes(form.quota);
    if (Number.isNaN(disk_quota)) return setProblems({ quota: t.admin.users.quotaInvalid });
    setProblems({});
    try {
      await adminApi.createGroup({ name: form.name.trim(), disk_quota }, orgId);
      setDone(s().created(form.name.trim()));
      setForm({ name: '', quota: form.quota });
      await load();
    } catch (err) {
      const field = err instanceof ApiError ? (err.code === 'group_name_taken' ? 'name' : err.field()) : undefined;
      setProblems(field === 'name' ? { name: errorText(err) } : field === 'disk_quota' ? { quota: errorText(err) } : { form: errorText(err) });
    }
  };
  return (
    <>
      {about.builtin_admin && <OrganizationPicker value={orgId} onValue={setOrgId} />}
      <form class="panel" onSubmit={create} noValidate>
        <h2>{s().create}</h2>
        <Field id="group-name" label={s().name} hint={s().nameHint} value={form.name} onValue={(name) => setForm({ ...form, name })} error={problems.name} maxLength={100} />
        <Field id="group-quota" label={t.admin.users.quota} hint={s().quotaHint} inputMode="decimal" value={form.quota} onValue={(quota) => setForm({ ...form, quota })} error={problems.quota} />
        <FormError text={problems.form} />
        <button type="submit">{s().create}</button>
        <p role="status">{done}</p>
      </form>
      <h2>{s().list}</h2>
      <p role="status">{deleted}</p>
      <FormError text={listError} />
      {groups === undefined ? (
        !listError && <p>{t.loading}</p>
      ) : groups.length === 0 ? (
        <p>{s().none}</p>
      ) : (
        <ul class="admin-list">
          {groups.map((group) => (
            <GroupRow
              key={group.group_uuid}
              group={group}
              groups={groups}
              users={users}
              onChanged={() => void load()}
              onDeleted={(message) => {
                setDeleted(message);
                void load();
              }}
            />
          ))}
        </ul>
      )}
    </>
  );
}
