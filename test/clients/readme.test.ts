/**
 * README.md works top to bottom (issue 16): its ```sh blocks, except those marked
 * `<!-- readme-test: skip (why) -->` on the line before (root, a build, another machine), run in
 * order in ONE bash with `set -euo pipefail`, as a reader pasting them would, against a real
 * driveway process started with a fresh data directory in the shell's working folder (so the
 * README's `cat data/initial-admin-password` reads the generated password, as a user's would).
 * The only line changed is where the README defines BASE and DAV: there the test's free loopback
 * ports replace the defaults 8080 and 8081. The README's calls use `curl --fail-with-body`, so an
 * error answer fails the run. `oathtool`, when missing, is a shell function computing the same
 * TOTP code with the `otpauth` package the store uses. Afterwards, what the blocks did is checked
 * from outside: downloads, the WebDrive URL, 2FA on, the app password opening the drive, the
 * modification time rclone kept, the file rclone's nextcloud vendor copied, the accepted copy,
 * the deleted user.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { spawnDriveway, type DrivewayProcess } from '../helpers/driveway-process.js';
import { freeLoopbackPort } from '../helpers/free-port.js';
import { requireBinary } from '../helpers/require-binary.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { runProgram, type ProgramRun } from './run-program.js';

const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md');
const RUN_TIMEOUT_MS = 120_000;
const START_ATTEMPTS = 3;

const curl = requireBinary('curl');
const jq = requireBinary('jq');
const bash = requireBinary('bash');
const rclone = requireBinary('rclone');

interface ReadmeBlock {
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  skipped: boolean;
  skipReason: string;
  text: string;
}

/** Every top-level fenced block of a Markdown text, with the skip marker of the line before it. */
function fencedBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[i] as string);
    if (!open) continue;
    const indent = open[1] as string;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && (lines[j] as string).trimEnd() !== `${indent}\`\`\``) body.push((lines[j++] as string).slice(indent.length));
    if (j === lines.length) throw new Error(`README.md line ${i + 1}: a fence that is never closed`);
    let k = i - 1;
    while (k >= 0 && (lines[k] as string).trim() === '') k--;
    const marker = k >= 0 ? /^<!-- readme-test: skip(?: \((.+)\))? -->$/.exec((lines[k] as string).trim()) : null;
    blocks.push({ line: i + 1, lang: open[2] as string, skipped: marker !== null, skipReason: marker?.[1] ?? '', text: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** The README's one definition of a variable, e.g. `BASE=http://127.0.0.1:8080   # ...`, pointed at `value`. */
function redefine(script: string, name: string, defaultValue: string, value: string): string {
  const pattern = new RegExp(`^${name}=${defaultValue.replace(/[.]/g, '\\.')}(?=\\s|$)`, 'gm');
  const found = script.match(pattern)?.length ?? 0;
  if (found !== 1) throw new Error(`README.md must define ${name}=${defaultValue} exactly once in its runnable blocks (found ${found})`);
  return script.replace(pattern, `${name}=${value}`);
}

const blocks = fencedBlocks(readFileSync(README, 'utf8'));
const runnable = blocks.filter((b) => b.lang === 'sh' && !b.skipped);

// The TOTP code `oathtool --totp -b SECRET` prints, from the otpauth package, when oathtool is missing.
const otpauthPath = createRequire(import.meta.url).resolve('otpauth');
const oathtoolShim = `command -v oathtool >/dev/null || oathtool() {
  node -e 'const { TOTP } = require(process.argv[1]); console.log(new TOTP({ secret: process.argv[2] }).generate())' ${JSON.stringify(otpauthPath)} "\${@: -1}"
}`;

function script(storeUrl: string, davUrl: string, varsFile: string): string {
  const parts = runnable.map((b) => `# ---- README.md line ${b.line}\nREADME_LINE=${b.line}\n${b.text}`);
  let body = parts.join('\n\n');
  body = redefine(body, 'BASE', 'http://127.0.0.1:8080', storeUrl);
  body = redefine(body, 'DAV', 'http://127.0.0.1:8081', davUrl);
  return [
    'set -euo pipefail',
    `trap 'echo "README block at line $README_LINE failed: $BASH_COMMAND" >&2' ERR`,
    oathtoolShim,
    body,
    // What the checks below need, written after the last block.
    `jq -n --arg app "$APP_PASSWORD" --arg link "$LINK" --arg ada "$ADA" --arg grace "$GRACE" --arg alan "$ALAN" '{$app, $link, $ada, $grace, $alan}' > ${JSON.stringify(varsFile)}`,
    '',
  ].join('\n');
}

// The first missing program decides the skip (with CI=true requireBinary has thrown already).
const gate = [curl, jq, bash, rclone].find((program) => !program.isAvailable) ?? bash;

gate.describe('README.md, its shell blocks in order against a fresh instance', () => {
  const tmp = makeTmpDir('driveway-readme-');
  let instance: DrivewayProcess;
  let run: ProgramRun;
  let vars: { app: string; link: string; ada: string; grace: string; alan: string };

  beforeAll(async () => {
    for (let attempt = 1; ; attempt++) {
      const [storePort, davPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
      try {
        instance = await spawnDriveway({
          dataDir: path.join(tmp.dir, 'data'),
          // No DRIVEWAY_ADMIN_PASSWORD: the password is generated into data/initial-admin-password.
          env: { DRIVEWAY_ADMIN_PASSWORD: '', DRIVEWAY_STORE_PORT: String(storePort), DRIVEWAY_DAV_PORT: String(davPort), DRIVEWAY_LOG_LEVEL: 'warn' },
        });
        break;
      } catch (err) {
        if (attempt === START_ATTEMPTS) throw err; // a port taken between the probe and the bind
      }
    }
    const varsFile = path.join(tmp.dir, 'readme-vars.json');
    const scriptFile = path.join(tmp.dir, 'readme.sh');
    writeFileSync(scriptFile, script(instance.storeUrl, instance.davUrl, varsFile));
    run = await runProgram(bash.path, [scriptFile], {
      cwd: tmp.dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp.dir, LANG: 'C.UTF-8' },
      timeoutMs: RUN_TIMEOUT_MS,
    });
    if (run.code === 0) vars = JSON.parse(readFileSync(varsFile, 'utf8')) as typeof vars;
  }, RUN_TIMEOUT_MS + 40_000);

  afterAll(async () => {
    instance?.kill();
    await instance?.exited;
    tmp.remove();
  });

  it('marks every shell block it does not run with a reason, and runs the rest', () => {
    for (const b of blocks.filter((x) => x.skipped)) expect(b.skipReason, `README.md line ${b.line}: skip without a reason`).not.toBe('');
    expect(runnable.length).toBeGreaterThanOrEqual(6);
  });

  it('runs every block without a failed command', () => {
    expect(run.timedOut).toBe(false);
    expect(run.code, `stderr:\n${run.stderr}\nstdout:\n${run.stdout}`).toBe(0);
  });

  it('downloads the uploaded file by URL, by public link and through the WebDrive URL', () => {
    expect(run.stdout.match(/^hello, driveway$/gm)?.length).toBe(3);
    expect(vars.link.startsWith(`${instance.storeUrl}/public/`)).toBe(true);
  });

  it('prints the WebDrive URL on the bridge it runs against', () => {
    expect(run.stdout).toContain(`{"endpoint":"ada","url":"${instance.davUrl}/webdrive/ada/","root_url":"${instance.davUrl}/"}`);
  });

  it("shows the local modification time in rclone's listing of a file it copied (vendor owncloud)", () => {
    expect(run.stdout).toMatch(/^\s*8 2024-05-01 12:00:00\.000000000 minutes\.txt$/m);
  });

  it('lists the file rclone copied through /remote.php/dav/files/<user>/ (vendor nextcloud) at its size', () => {
    expect(run.stdout).toMatch(/^\s*25000000 \S+ \S+ big\.bin$/m);
  });

  it('leaves Ada with two-factor authentication on and an app password that opens her drive', async () => {
    const login = await fetch(`${instance.storeUrl}/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'ada@example.com', password: 'Analytical-Engine-1' }),
    });
    expect(login.status).toBe(401);
    expect(await login.text()).toContain('two-factor code');

    const basic = `Basic ${Buffer.from(`ada@example.com:${vars.app}`).toString('base64')}`;
    const notes = await fetch(`${instance.davUrl}/webdrive/ada/reports/notes.txt`, { headers: { authorization: basic } });
    expect(notes.status).toBe(200);
    expect(await notes.text()).toBe('hello, driveway\n');
  });

  it('gives Bob the accepted copy in incoming and leaves Alan deleted, his files with Grace', async () => {
    const session = async (username: string, password: string) => {
      const answer = await fetch(`${instance.storeUrl}/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password }),
      });
      expect(answer.status).toBe(200);
      return ((await answer.json()) as { token: string }).token;
    };
    const bob = await session('bob@example.com', 'Difference-Engine-2');
    const incoming = (await (await fetch(`${instance.storeUrl}/api/nodes/incoming/dirlist`, { headers: { authorization: `Bearer ${bob}` } })).json()) as {
      data: { name: string }[];
    };
    expect(incoming.data.map((n) => n.name)).toEqual(['hello.txt']);

    const adminPassword = readFileSync(path.join(tmp.dir, 'data', 'initial-admin-password'), 'utf8').trim();
    const admin = await session('admin', adminPassword);
    const acme = (await (await fetch(`${instance.storeUrl}/api/admin/users?org_id=acme`, { headers: { authorization: `Bearer ${admin}` } })).json()) as {
      data: { uuid: string }[];
    };
    expect(acme.data.map((u) => u.uuid)).toEqual([vars.grace]);
  });
});
