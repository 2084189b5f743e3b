/**
 * /admin and its sections (issue 24 item 7): for administrators only. Another person gets a
 * refusal in words and no call is made for data. The page shows the server's edition and version
 * (GET /api/admin/about), whether the person is the built-in admin, and the sections: users,
 * groups, organizations, approvers. What only the built-in admin may do is said on those controls,
 * which the others do not get (the store refuses them: docs/extensions.md "Organizations").
 */
import { adminApi } from '../api/admin.js';
import { useResource } from '../api/use-resource.js';
import { FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { Link, useLocation } from '../router.js';
import { currentSession } from '../session.js';
import { t } from '../strings/index.js';
import { AdminApprovers } from './admin-approvers.js';
import { AdminGroups } from './admin-groups.js';
import { AdminOrganizations } from './admin-organizations.js';
import { AdminUsers } from './admin-users.js';

const SECTIONS = ['users', 'groups', 'organizations', 'approvers'] as const;
type Section = (typeof SECTIONS)[number];

export function isAdminPath(path: string): boolean {
  return path === '/admin' || SECTIONS.some((section) => path === `/admin/${section}`);
}

export function Admin() {
  const { path } = useLocation();
  const section = path.split('/')[2] as Section | undefined;
  const allowed = currentSession()?.isAdmin === true;
  // Another person's page makes no call for data at all.
  const { data: about, error } = useResource(() => (allowed ? adminApi.about() : Promise.resolve(undefined)), [allowed]);
  const title = section ? t.admin.sections[section] : t.admin.title;
  if (!allowed) {
    return (
      <Page title={t.admin.title}>
        <p class="warning">{t.admin.refused}</p>
      </Page>
    );
  }
  return (
    <Page title={title}>
      <nav aria-label={t.admin.sectionsNav} class="admin-nav">
        <ul>
          <li>
            <Link href="/admin" aria-current={section === undefined ? 'page' : undefined}>
              {t.admin.overview}
            </Link>
          </li>
          {SECTIONS.map((name) => (
            <li key={name}>
              <Link href={`/admin/${name}`} aria-current={section === name ? 'page' : undefined}>
                {t.admin.sections[name]}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <FormError text={error} />
      {about === undefined ? (
        !error && <p>{t.loading}</p>
      ) : section === 'users' ? (
        <AdminUsers about={about} />
      ) : section === 'groups' ? (
        <AdminGroups about={about} />
      ) : section === 'organizations' ? (
        <AdminOrganizations about={about} />
      ) : section === 'approvers' ? (
        <AdminApprovers about={about} />
      ) : (
        <section aria-labelledby="about-heading">
          <h2 id="about-heading">{t.admin.server}</h2>
          <dl class="settings">
            <dt>{t.admin.edition}</dt>
            <dd>{about.edition}</dd>
            <dt>{t.admin.version}</dt>
            <dd>{about.version}</dd>
            <dt>{t.admin.organization}</dt>
            <dd>{about.org_id}</dd>
            <dt>{t.admin.you}</dt>
            <dd>{about.builtin_admin ? t.admin.youBuiltin : t.admin.youAdmin}</dd>
          </dl>
          <ul class="admin-list">
            {SECTIONS.map((name) => (
              <li key={name}>
                <Link href={`/admin/${name}`}>{t.admin.sections[name]}</Link>: {t.admin.sectionText[name]}
              </li>
            ))}
          </ul>
        </section>
      )}
    </Page>
  );
}
