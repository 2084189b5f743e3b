/**
 * /groups/<uuid> (issue 24 item 6): one group for its members, administered by its group
 * administrators. Members see the members, tags and (when shown to them) the WebDrive URL
 * read-only, with a line saying only group administrators change them; group administrators
 * add members, change their permissions and remove them, add tags, and create, change or delete
 * the group's WebDrive endpoint and whether members see it. Approvers are named by
 * administrators only (/api/admin/.../approvers): an administrator gets them here too, a group
 * administrator a line saying so. A group the person is not in (another organization's included)
 * is the store's 404: "not found", nothing else.
 */
import { useEffect, useState } from 'preact/hooks';
import { useResource } from '../api/use-resource.js';
import { ApiError, errorText } from '../api/client.js';
import { adminApi, groupsApi, NODE_PERMISSIONS, SHARE_PERMISSIONS, SHARE_TYPES, TAG_PERMISSIONS, type DirectoryUser, type GroupDetails, type GroupWebdrive, type Member, type Permissions, type ShareType } from '../api/admin.js';
import { CopyValue } from '../components/copy-button.js';
import { Field, FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { Link } from '../router.js';
import { currentSession } from '../session.js';
import { t } from '../strings/index.js';

const s = () => t.admin.group;

export function isGroupPath(path: string): boolean {
  return /^\/groups\/[^/]+$/.test(path);
}

type PermissionSet = 'node_permissions' | 'tag_permissions' | 'share_permissions';
const SETS: ReadonlyArray<[PermissionSet, readonly string[]]> = [
  ['node_permissions', NODE_PERMISSIONS],
  ['tag_permissions', TAG_PERMISSIONS],
  ['share_permissions', SHARE_PERMISSIONS],
];

function permissionName(set: PermissionSet, permission: string): string {
  return (s().permissions[set] as Record<string, string>)[permission] ?? permission;
}

/** Check boxes for a membership's permissions; `id` keeps the labels unique on the page. */
export function PermissionBoxes({ id, value, onChange, disabled }: { id: string; value: Permissions; onChange: (value: Permissions) => void; disabled?: boolean }) {
  const toggle = (set: PermissionSet, permission: string, on: boolean) =>
    onChange({ ...value, [set]: on ? [...value[set], permission] : value[set].filter((p) => p !== permission) });
  return (
    <div class="permissions">
      <div class="check">
        <input type="checkbox" id={`${id}-admin`} checked={value.is_admin} disabled={disabled} onChange={(e) => onChange({ ...value, is_admin: (e.currentTarget as HTMLInputElement).checked })} />
        <label for={`${id}-admin`}>{s().isAdmin}</label>
      </div>
      {SETS.map(([set, values]) => (
        <fieldset key={set}>
          <legend>{s().sets[set]}</legend>
          {values.map((permission) => (
            <div class="check" key={permission}>
              <input
                type="checkbox"
                id={`${id}-${set}-${permission}`}
                checked={value[set].includes(permission)}
                disabled={disabled}
                onChange={(e) => toggle(set, permission, (e.currentTarget as HTMLInputElement).checked)}
              />
              <label for={`${id}-${set}-${permission}`}>{permissionName(set, permission)}</label>
            </div>
          ))}
        </fieldset>
      ))}
    </div>
  );
}

/** What a new member starts with on every add: read only, whatever the previous member was given. */
export const NEW_MEMBER: Readonly<Permissions> = { is_admin: false, node_permissions: ['read'], tag_permissions: [], share_permissions: [] };

function permissionsOf(member: Permissions): Permissions {
  return { is_admin: member.is_admin, node_permissions: [...member.node_permissions], tag_permissions: [...member.tag_permissions], share_permissions: [...member.share_permissions] };
}

/** Who may do what, in words: "Group administrator", or the permissions held ("Read, Write, Create tags"). */
export function permissionSummary(member: Permissions): string {
  if (member.is_admin) return s().adminMayAll;
  const held = SETS.filter(([set]) => member[set].length > 0).map(([set]) => `${s().sets[set]}: ${member[set].map((p) => permissionName(set, p).toLowerCase()).join(', ')}`);
  return held.length > 0 ? held.join(' · ') : s().noPermissions;
}

function MemberRow({ group, member, admin, onChanged }: { group: string; member: Member; admin: boolean; onChanged: () => void }) {
  const [value, setValue] = useState(permissionsOf(member));
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const run = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    setSaved(false);
    try {
      await work();
      setSaved(true);
      onChanged();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const label = `${member.fullname} (${member.email})`;
  if (!admin) {
    return (
      <li>
        <strong>{label}</strong>
        <br />
        <span class="muted">{permissionSummary(member)}</span>
      </li>
    );
  }
  return (
    <li>
      <details>
        <summary>
          {label} <span class="muted">{permissionSummary(member)}</span>
        </summary>
        <form onSubmit={(e) => (e.preventDefault(), void run(() => groupsApi.setMember(group, member.user_uuid, value)))}>
          <PermissionBoxes id={`m-${member.user_uuid}`} value={value} onChange={setValue} />
          <FormError text={error} />
          <div class="actions">
            <button type="submit" disabled={busy} aria-label={s().saveMemberOf(member.fullname)}>
              {s().saveMember}
            </button>
            <button type="button" class="secondary" disabled={busy} aria-label={s().removeMemberOf(member.fullname)} onClick={() => void run(() => groupsApi.removeMember(group, member.user_uuid))}>
              {s().removeMember}
            </button>
          </div>
          <p role="status">{saved ? s().memberSaved : ''}</p>
        </form>
      </details>
    </li>
  );
}

/** A choice among the organization's active users (the store's directory), by name and email. */
export function UserSelect({ id, label, users, value, onValue, exclude = [] }: { id: string; label: string; users: DirectoryUser[]; value: string; onValue: (v: string) => void; exclude?: string[] }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onValue((e.currentTarget as HTMLSelectElement).value)}>
        <option value="">{t.admin.choose}</option>
        {users
          .filter((user) => !exclude.includes(user.uuid))
          .map((user) => (
            <option key={user.uuid} value={user.uuid}>
              {user.fullname} ({user.email})
            </option>
          ))}
      </select>
    </div>
  );
}

function Members({ group, admin }: { group: string; admin: boolean }) {
  const { data: members, error, refresh: load } = useResource(() => groupsApi.members(group), [group]);
  const directory = useResource(() => (admin ? groupsApi.directory() : Promise.resolve([] as DirectoryUser[])), [admin]);
  const users = directory.data ?? [];
  const [adding, setAdding] = useState('');
  const [perms, setPerms] = useState<Permissions>(permissionsOf(NEW_MEMBER));
  const [actionError, setAddError] = useState<string | undefined>();
  const addError = actionError ?? directory.error;
  const add = async (event: Event) => {
    event.preventDefault();
    if (!adding) return setAddError(s().chooseUser);
    setAddError(undefined);
    try {
      await groupsApi.addMember(group, adding, perms);
      setAdding('');
      setPerms(permissionsOf(NEW_MEMBER));
      await load();
    } catch (err) {
      setAddError(errorText(err));
    }
  };
  return (
    <section aria-labelledby="members-heading">
      <h2 id="members-heading">{s().members}</h2>
      {!admin && <p class="notice">{s().onlyAdmins}</p>}
      <FormError text={error} />
      {members === undefined ? (
        !error && <p>{t.loading}</p>
      ) : (
        <ul class="admin-list">
          {members.map((member) => (
            <MemberRow key={member.user_uuid} group={group} member={member} admin={admin} onChanged={() => void load()} />
          ))}
        </ul>
      )}
      {admin && (
        <form class="panel" onSubmit={add} noValidate>
          <h3>{s().addMember}</h3>
          <UserSelect id="add-member" label={s().user} users={users} value={adding} onValue={setAdding} exclude={members?.map((m) => m.user_uuid) ?? []} />
          <PermissionBoxes id="new-member" value={perms} onChange={setPerms} />
          <FormError text={addError} />
          <button type="submit">{s().addMember}</button>
        </form>
      )}
    </section>
  );
}

function Tags({ group, canCreate }: { group: string; canCreate: boolean }) {
  const { data: tags, error: loadError, refresh: load } = useResource(() => groupsApi.tags(group), [group]);
  const [name, setName] = useState('');
  const [tagClass, setTagClass] = useState('general');
  const [actionError, setError] = useState<string | undefined>();
  const error = actionError ?? loadError;
  // A refusal the store names a field of (`name: ...`, `class: ...`) is said at that field.
  const [fieldError, setFieldError] = useState<{ name?: string; class?: string }>({});
  const add = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setFieldError({});
    try {
      await groupsApi.addTag(group, { name: name.trim(), class: tagClass.trim() });
      setName('');
      await load();
    } catch (err) {
      const field = err instanceof ApiError ? err.field() : undefined;
      if (field === 'name' || field === 'class') setFieldError({ [field]: errorText(err) });
      else setError(errorText(err));
    }
  };
  return (
    <section aria-labelledby="tags-heading">
      <h2 id="tags-heading">{s().tags}</h2>
      {tags === undefined ? (
        !error && <p>{t.loading}</p>
      ) : tags.length === 0 ? (
        <p>{s().noTags}</p>
      ) : (
        <ul class="admin-list">
          {tags.map((tag) => (
            <li key={tag.name}>
              {tag.name} <span class="muted">({tag.class})</span>
            </li>
          ))}
        </ul>
      )}
      {canCreate ? (
        <form class="panel" onSubmit={add} noValidate>
          <Field id="tag-name" label={s().tagName} value={name} onValue={setName} maxLength={64} error={fieldError.name} />
          <Field id="tag-class" label={s().tagClass} hint={s().tagClassHint} value={tagClass} onValue={setTagClass} error={fieldError.class} />
          <FormError text={error} />
          <button type="submit">{s().addTag}</button>
        </form>
      ) : (
        <>
          <FormError text={error} />
          <p class="notice">{s().tagsOnly}</p>
        </>
      )}
    </section>
  );
}

function Webdrive({ group, admin }: { group: string; admin: boolean }) {
  // 403: the group's administrators do not show its URL to members (a state, not an error).
  const resource = useResource(
    () => groupsApi.webdrive(group).catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 403) return 'hidden' as const;
      throw err;
    }),
    [group],
  );
  const hidden = resource.data === 'hidden';
  const current: GroupWebdrive | undefined = resource.data === 'hidden' ? undefined : resource.data;
  const setCurrent = (answer: GroupWebdrive) => resource.set(answer);
  const load = resource.refresh;
  const [endpoint, setEndpoint] = useState('');
  const [show, setShow] = useState(true);
  // The form starts from what the store holds, each time it is loaded again.
  useEffect(() => {
    if (!current) return;
    setEndpoint(current.endpoint ?? '');
    setShow(current.show_url_to_group_members);
  }, [current]);
  const [actionError, setError] = useState<string | undefined>();
  const error = actionError ?? resource.error;
  const [saved, setSaved] = useState<string>('');
  const save = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setSaved('');
    try {
      setCurrent(await groupsApi.setWebdrive(group, endpoint.trim(), show));
      setSaved(s().webdriveSaved);
    } catch (err) {
      setError(errorText(err));
    }
  };
  const remove = async () => {
    setError(undefined);
    setSaved('');
    try {
      await groupsApi.deleteWebdrive(group);
      setEndpoint('');
      await load();
      setSaved(s().webdriveDeleted);
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <section aria-labelledby="webdrive-heading">
      <h2 id="webdrive-heading">{s().webdrive}</h2>
      {hidden ? (
        <p>{s().webdriveHidden}</p>
      ) : current === undefined ? (
        !error && <p>{t.loading}</p>
      ) : current.url ? (
        <>
          <p>{current.show_url_to_group_members ? s().webdriveShown : s().webdriveAdminsOnly}</p>
          <CopyValue text={current.url} label={s().copyWebdrive} />
        </>
      ) : (
        <p>{s().webdriveNone}</p>
      )}
      {admin ? (
        <form class="panel" onSubmit={save} noValidate>
          <Field id="group-endpoint" label={s().endpoint} hint={t.connect.endpointHint} value={endpoint} onValue={setEndpoint} maxLength={10} />
          <div class="check">
            <input type="checkbox" id="show-members" checked={show} onChange={(e) => setShow((e.currentTarget as HTMLInputElement).checked)} />
            <label for="show-members">{s().showMembers}</label>
          </div>
          <FormError text={error} />
          <div class="actions">
            <button type="submit">{current?.endpoint ? s().webdriveChange : s().webdriveCreate}</button>
            {current?.endpoint && (
              <button type="button" class="secondary" onClick={() => void remove()}>
                {s().webdriveDelete}
              </button>
            )}
          </div>
          <p role="status">{saved}</p>
        </form>
      ) : (
        <>
          <FormError text={error} />
          <p class="notice">{s().onlyAdmins}</p>
        </>
      )}
    </section>
  );
}

/** Approvers of the group's workspace: administrators only (the store has no group-admin call for them). */
export function ApproverEditor({ kind, uuid, users }: { kind: 'users' | 'groups'; uuid: string; users: DirectoryUser[] }) {
  const { data: list, error: loadError, refresh: load } = useResource(() => adminApi.approvers(kind, uuid), [kind, uuid]);
  const [who, setWho] = useState('');
  const [type, setType] = useState<ShareType>('public');
  const [actionError, setError] = useState<string | undefined>();
  const error = actionError ?? loadError;
  const run = async (work: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await work();
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <div>
      {list === undefined ? (
        !error && <p>{t.loading}</p>
      ) : list.length === 0 ? (
        <p>{t.admin.approvers.none}</p>
      ) : (
        <ul class="admin-list">
          {list.map((approver) => (
            <li key={`${approver.approver_id}-${approver.share_type}`}>
              {t.admin.approvers.line(approver.fullname, t.admin.approvers.types[approver.share_type])}{' '}
              <button
                type="button"
                class="secondary"
                aria-label={t.admin.approvers.removeOf(approver.fullname, t.admin.approvers.types[approver.share_type])}
                onClick={() => void run(() => adminApi.removeApprover(kind, uuid, approver.approver_id, approver.share_type))}
              >
                {t.admin.approvers.remove}
              </button>
            </li>
          ))}
        </ul>
      )}
      <form class="panel" onSubmit={(e) => (e.preventDefault(), void (who ? run(() => adminApi.addApprover(kind, uuid, who, type)) : setError(s().chooseUser)))} noValidate>
        <UserSelect id={`approver-${uuid}`} label={t.admin.approvers.approver} users={users} value={who} onValue={setWho} exclude={kind === 'users' ? [uuid] : []} />
        <div class="field">
          <label for={`approver-type-${uuid}`}>{t.admin.approvers.type}</label>
          <select id={`approver-type-${uuid}`} value={type} onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value as ShareType)}>
            {SHARE_TYPES.map((value) => (
              <option key={value} value={value}>
                {t.admin.approvers.types[value]}
              </option>
            ))}
          </select>
        </div>
        <FormError text={error} />
        <button type="submit">{t.admin.approvers.add}</button>
      </form>
    </div>
  );
}

function GroupApprovers({ group }: { group: string }) {
  const isAdministrator = currentSession()?.isAdmin === true;
  const users = useResource(() => (isAdministrator ? groupsApi.directory().catch(() => [] as DirectoryUser[]) : Promise.resolve([] as DirectoryUser[])), [isAdministrator]).data ?? [];
  return (
    <section aria-labelledby="approvers-heading">
      <h2 id="approvers-heading">{t.admin.approvers.title}</h2>
      {isAdministrator ? <ApproverEditor kind="groups" uuid={group} users={users} /> : <p class="notice">{s().approversAdminsOnly}</p>}
    </section>
  );
}

export function GroupAdmin({ uuid }: { uuid: string }) {
  // A group the person is not in is the store's 404: a state of the page, not an error.
  const { data, error } = useResource(
    () => groupsApi.details(uuid).catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 404) return 'missing' as const;
      throw err;
    }),
    [uuid],
  );
  const group: GroupDetails | undefined = data === 'missing' ? undefined : data;
  if (data === 'missing') {
    return (
      <Page title={s().notFoundTitle}>
        <p>{s().notFound}</p>
        <p>
          <Link href="/groups">{s().backToGroups}</Link>
        </p>
      </Page>
    );
  }
  return (
    <Page title={group ? group.group_name : t.admin.groups.title}>
      <p>
        <Link href="/groups">{s().backToGroups}</Link>
      </p>
      <FormError text={error} />
      {group === undefined ? (
        !error && <p>{t.loading}</p>
      ) : (
        <>
          <p>{group.is_admin ? s().youAdmin : s().youMember(permissionSummary(group))}</p>
          {group.description && <p>{group.description}</p>}
          <Members group={uuid} admin={group.is_admin} />
          <Tags group={uuid} canCreate={group.is_admin || group.tag_permissions.includes('create')} />
          <Webdrive group={uuid} admin={group.is_admin} />
          <GroupApprovers group={uuid} />
        </>
      )}
    </Page>
  );
}
