/**
 * "Connect your drive": the addresses to mount (GET /api/user/webdrive: the whole drive's
 * `root_url` and the person's WebDrive `url`; GET /api/groups and each group's
 * /api/groups/{uuid}/webdrive the group drives they may see), each with a Copy button, and a
 * guide per client with the real address and username filled in. Without a WebDrive URL the
 * person may choose one here (POST /api/user/webdrive). With two-factor authentication on, the
 * guides put an app password where a password goes (drive clients cannot ask for a code) and
 * link to Account, where one is made.
 */
import { useState } from 'preact/hooks';
import { api, ApiError, errorText } from '../api/client.js';
import { useResource } from '../api/use-resource.js';
import { CopyBlock, CopyValue } from '../components/copy-button.js';
import { Field, FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { Link } from '../router.js';
import { currentSession } from '../session.js';
import { t } from '../strings/index.js';

interface UserWebdrive {
  endpoint: string | null;
  url: string | null;
  root_url: string;
}

interface GroupDrive {
  name: string;
  url: string;
}

interface Loaded {
  webdrive: UserWebdrive;
  twofa: boolean;
  groups: GroupDrive[];
}

async function load(): Promise<Loaded> {
  const [webdrive, user, groups] = await Promise.all([
    api<UserWebdrive>('GET', '/api/user/webdrive'),
    api<{ twofa?: boolean }>('GET', '/api/user'),
    api<Array<{ group_uuid: string; group_name: string }>>('GET', '/api/groups'),
  ]);
  const drives = await Promise.all(
    groups.map(async (group) => {
      try {
        const drive = await api<{ url: string | null }>('GET', `/api/groups/${encodeURIComponent(group.group_uuid)}/webdrive`);
        return drive.url ? { name: group.group_name, url: drive.url } : undefined;
      } catch (error) {
        // 403: the group's administrators do not show its URL to members.
        if (error instanceof ApiError && error.status === 403) return undefined;
        throw error;
      }
    }),
  );
  return { webdrive, twofa: user.twofa === true, groups: drives.filter((drive): drive is GroupDrive => drive !== undefined) };
}

function ChooseEndpoint({ onSaved }: { onSaved: (webdrive: UserWebdrive) => void }) {
  const [name, setName] = useState('');
  const [problem, setProblem] = useState<{ field?: string; form?: string }>({});
  const [busy, setBusy] = useState(false);
  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem({});
    try {
      onSaved(await api<UserWebdrive>('POST', '/api/user/webdrive', { endpoint: name.trim() }));
    } catch (error) {
      if (error instanceof ApiError && error.code === 'endpoint_taken') setProblem({ field: t.connect.endpointTaken });
      else if (error instanceof ApiError && error.status === 400) setProblem({ field: errorText(error) });
      else setProblem({ form: errorText(error) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="inline-form" onSubmit={save} noValidate>
      <p>{t.connect.noWebdrive}</p>
      <Field id="endpoint" label={t.connect.endpointLabel} hint={t.connect.endpointHint} autoCapitalize="none" spellcheck={false} value={name} onValue={setName} error={problem.field} />
      <FormError text={problem.form} />
      <button type="submit" disabled={busy}>
        {t.connect.endpointSave}
      </button>
    </form>
  );
}

/** The server address a sync app wants: the bridge's root without its trailing slash. */
function syncAddressOf(rootUrl: string): string {
  return rootUrl.replace(/\/+$/, '');
}

/** Whether the Nextcloud desktop would refuse the address: it takes any `/dav` or `/webdav` in it for a WebDAV URL. */
function looksLikeDavUrl(address: string): boolean {
  return /\/(web)?dav(\/|$)/i.test(new URL(address).pathname);
}

function SyncApps({ rootUrl }: { rootUrl: string }) {
  const c = t.connect;
  const address = syncAddressOf(rootUrl);
  return (
    <details>
      <summary>{c.syncApps}</summary>
      <p>{c.syncIntro}</p>
      <ol>
        <li>{c.syncSteps[0]}</li>
        <li>
          {c.syncSteps[1]} <code>{address}</code>
        </li>
        <li>{c.syncSteps[2]}</li>
        <li>{c.syncSteps[3]}</li>
      </ol>
      {looksLikeDavUrl(address) && <p class="warning">{c.syncDavPath}</p>}
    </details>
  );
}

function Guides({ url, rootUrl, username, twofa }: { url: string; rootUrl: string; username: string; twofa: boolean }) {
  const c = t.connect;
  // With 2FA on, a drive client signs in with an app password: the guides say so where a password goes.
  const secret = twofa ? c.appPasswordPlaceholder : c.passwordPlaceholder;
  const makeOne = twofa && (
    <p class="warning">
      {c.useAppPassword} <Link href="/account">{c.makeAppPassword}</Link>
    </p>
  );
  const parsed = new URL(url);
  const https = parsed.protocol === 'https:';
  const port = parsed.port || (https ? '443' : '80');
  const rcloneBlock = `[driveway]\ntype = webdav\nurl = ${url}\nvendor = owncloud\nuser = ${username}\npass = ${c.rclonePassPlaceholder}`;
  const rcloneCommand = `rclone config create driveway webdav url='${url}' vendor=owncloud user='${username}' pass="$(rclone obscure '${secret}')"`;
  const fstab = `${url} /home/you/driveway davfs user,noauto,uid=you 0 0`;
  const secrets = `${url} ${username} ${secret}`;
  return (
    <section aria-labelledby="guides">
      <h2 id="guides">{c.guides}</h2>
      <p>{c.guidesIntro(url)}</p>
      <SyncApps rootUrl={rootUrl} />
      <details>
        <summary>{c.finder}</summary>
        <ol>
          <li>{c.finderSteps[0]}</li>
          <li>
            {c.finderSteps[1]} <code>{url}</code>
          </li>
          <li>{c.finderSteps[2]}</li>
        </ol>
      </details>
      <details>
        <summary>{c.explorer}</summary>
        {!https && <p class="warning">{c.explorerHttp}</p>}
        <ol>
          <li>{c.explorerSteps[0]}</li>
          <li>
            {c.explorerSteps[1]} <code>{url}</code>
          </li>
          <li>{c.explorerSteps[2]}</li>
        </ol>
        <p>{c.explorerLimit}</p>
      </details>
      <details>
        <summary>{c.rclone}</summary>
        <p>{c.rcloneIntro}</p>
        {makeOne}
        <CopyBlock text={rcloneBlock} label={c.copyBlock(c.blockRclone)} />
        <p>{c.rcloneObscure(secret)}</p>
        <CopyBlock text={rcloneCommand} label={c.copyBlock(c.blockRcloneCommand)} />
        <p>{c.rcloneUse}</p>
      </details>
      <details>
        <summary>{c.davfs2}</summary>
        <p>{c.davfs2Fstab}</p>
        <CopyBlock text={fstab} label={c.copyBlock(c.blockFstab)} />
        {makeOne}
        <p>{c.davfs2Secrets}</p>
        <CopyBlock text={secrets} label={c.copyBlock(c.blockSecrets)} />
        <p>{c.davfs2Mount}</p>
      </details>
      <details>
        <summary>{c.cyberduck}</summary>
        <p>{c.cyberduckSteps}</p>
        <p>{c.winscpIntro}</p>
        <dl class="settings">
          <dt>{c.winscpProtocol}</dt>
          <dd>{c.winscpWebdav}</dd>
          <dt>{c.winscpEncryption}</dt>
          <dd>{https ? c.winscpTls : c.winscpNone}</dd>
          <dt>{c.winscpHost}</dt>
          <dd>
            <code>{parsed.hostname}</code>
          </dd>
          <dt>{c.winscpPort}</dt>
          <dd>
            <code>{port}</code>
          </dd>
          <dt>{c.username}</dt>
          <dd>
            <code>{username}</code>
          </dd>
          <dt>{c.winscpPath}</dt>
          <dd>
            <code>{decodeURIComponent(parsed.pathname)}</code>
          </dd>
        </dl>
      </details>
      <details>
        <summary>{c.mobile}</summary>
        <p>{c.mobileSteps}</p>
        <p>
          <code>{url}</code>
        </p>
      </details>
    </section>
  );
}

export function Connect() {
  const username = currentSession()?.username ?? '';
  const { data: loaded, error: problem, refresh, set: setLoaded } = useResource(load, []);

  const c = t.connect;
  return (
    <Page title={c.title}>
      <p>{c.intro}</p>
      {problem && !loaded && (
        <div class="panel">
          <p role="alert">{problem}</p>
          <button type="button" onClick={() => void refresh()}>
            {t.retry}
          </button>
        </div>
      )}
      {!loaded && !problem && <p role="status">{t.loading}</p>}
      {loaded && (
        <>
          <section aria-labelledby="your-drive">
            <h2 id="your-drive">{c.yourDrive}</h2>
            {loaded.webdrive.url && (
              <>
                <h3>{c.webdriveLabel}</h3>
                <CopyValue text={loaded.webdrive.url} label={c.copyWebdrive} />
              </>
            )}
            <h3>{c.rootLabel}</h3>
            <CopyValue text={loaded.webdrive.root_url} label={c.copyRoot} />
            <p>{c.signInWith(username)}</p>
            {loaded.twofa && (
              <p class="warning">
                {c.twofaOn} <Link href="/account">{c.makeAppPassword}</Link>
              </p>
            )}
            {!loaded.webdrive.url && <ChooseEndpoint onSaved={(webdrive) => setLoaded({ ...loaded, webdrive })} />}
          </section>
          <section aria-labelledby="group-drives">
            <h2 id="group-drives">{c.groupDrives}</h2>
            {loaded.groups.length === 0 ? (
              <p>{c.groupDrivesNone}</p>
            ) : (
              <>
                <p>{c.groupDrivesIntro}</p>
                <ul class="drives">
                  {loaded.groups.map((group) => (
                    <li key={group.url}>
                      <h3>{group.name}</h3>
                      <CopyValue text={group.url} label={c.copyGroup(group.name)} />
                    </li>
                  ))}
                </ul>
              </>
            )}
          </section>
          <Guides url={loaded.webdrive.url ?? loaded.webdrive.root_url} rootUrl={loaded.webdrive.root_url} username={username} twofa={loaded.twofa} />
        </>
      )}
    </Page>
  );
}
