/**
 * The README's screenshots (docs/images/*.png): builds the web app, starts a store on 127.0.0.1
 * with a fresh data folder and a seeded drive (photos, a folder, documents of each kind), and
 * photographs Files, a folder, Details and the phone menu at 360 and 1,920 px in headless
 * Debian Chromium (test/helpers/chromium.ts). Each PNG is quantised to stay under 150 KB.
 *
 *   npx tsx scripts/screenshots.ts            (CHROMIUM=/path/to/chromium to use another)
 *
 * Nothing leaves the machine: the seed images are drawn here by sharp.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { build } from 'vite';
import { loadConfig } from '../src/common/config.js';
import { createLogger } from '../src/common/logger.js';
import { startStore } from '../src/store/server.js';
import { createStoreClient, nodeId, type HttpStoreClient, type StoreSession } from '../src/store-client/index.js';
import { launchChromium } from '../test/helpers/chromium.js';

const root = path.resolve(import.meta.dirname, '..');
const outDir = path.join(root, 'docs/images');
const MAX_PNG_BYTES = 150 * 1024;
const PASSWORD = 'Screen-Passw0rd';

/** A landscape-like picture drawn from a trusted SVG of our own (never a user's file). */
function picture(width: number, height: number, sky: [string, string], ground: string, sun: string): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="s" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${sky[0]}"/><stop offset="1" stop-color="${sky[1]}"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#s)"/>
    <circle cx="${width * 0.72}" cy="${height * 0.3}" r="${height * 0.12}" fill="${sun}"/>
    <path d="M0 ${height * 0.72} L${width * 0.25} ${height * 0.45} L${width * 0.45} ${height * 0.65} L${width * 0.7} ${height * 0.38} L${width} ${height * 0.7} V${height} H0z" fill="${ground}"/>
  </svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 85 }).toBuffer();
}

async function put(client: HttpStoreClient, s: StoreSession, folder: string, name: string, bytes: Buffer): Promise<string> {
  const result = await client.upload(s, { folder: nodeId(folder), name }, Readable.from([bytes]), bytes.length);
  return result.id as string;
}

async function seed(client: HttpStoreClient, s: StoreSession): Promise<{ holiday: string; photo: string }> {
  await client.createFolder(s, nodeId('home'), 'Holiday 2026');
  await client.createFolder(s, nodeId('home'), 'Reports');
  await client.createFolder(s, nodeId('home'), 'Music');
  const holiday = (await client.listFolder(s, nodeId('home'))).find((e) => e.name === 'Holiday 2026')?.id as string;
  const photos: Array<[string, [string, string], string, string]> = [
    ['Beach at dawn.jpg', ['#f7b267', '#f4845f'], '#2a6f97', '#fff3b0'],
    ['Mountains.jpg', ['#89c2d9', '#dceefb'], '#3a5a40', '#ffffff'],
    ['Lake in June.jpg', ['#a9def9', '#e4c1f9'], '#2d6a4f', '#fcf6bd'],
    ['Evening city.jpg', ['#22223b', '#9a8c98'], '#4a4e69', '#f2e9e4'],
  ];
  let photo = '';
  for (const [name, sky, ground, sun] of photos) {
    const id = await put(client, s, holiday, name, await picture(1600, 1066, sky, ground, sun));
    if (!photo) photo = id;
  }
  await put(client, s, 'home', 'Cover.jpg', await picture(1200, 800, ['#90e0ef', '#caf0f8'], '#588157', '#ffd166'));
  const filler = (n: number) => Buffer.alloc(n, 7);
  await put(client, s, 'home', 'Budget 2026.xlsx', filler(48_213));
  await put(client, s, 'home', 'Minutes.docx', filler(23_904));
  await put(client, s, 'home', 'Quarterly review.pptx', filler(1_204_331));
  await put(client, s, 'home', 'Contract.pdf', filler(312_004));
  await put(client, s, 'home', 'notes.md', Buffer.from('# Notes\n\nThings to remember.\n'));
  await put(client, s, 'home', 'Backup.zip', filler(2_048_000));
  await put(client, s, 'home', 'Interview.mp3', filler(3_100_000));
  await put(client, s, 'home', 'Clip.mp4', filler(5_400_000));
  return { holiday, photo };
}

async function main(): Promise<void> {
  const webDir = mkdtempSync(path.join(os.tmpdir(), 'driveway-shots-web-'));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'driveway-shots-data-'));
  await build({ configFile: path.join(root, 'vite.web.config.ts'), logLevel: 'error', build: { outDir: webDir, emptyOutDir: true } });
  const config = loadConfig({
    env: {},
    flags: { dataDir, host: '127.0.0.1', logLevel: 'silent', 'store.port': 0, 'store.adminPassword': 'Admin-Passw0rd-shots', 'store.scryptCost': 1024, 'store.edition': '3.0', 'store.webDir': webDir },
  });
  const store = await startStore({ config, logger: createLogger('silent') });
  const client = createStoreClient(store.url, { retries: 0 });
  const browser = await launchChromium(process.env.CHROMIUM ?? '/usr/bin/chromium');
  try {
    const admin = await client.login('admin', 'Admin-Passw0rd-shots');
    await client.createUser(admin, { fullname: 'Ada Lovelace', email: 'ada@example.test', password: PASSWORD, diskQuotaBytes: 0 });
    const ada = await client.login('ada@example.test', PASSWORD);
    const { holiday, photo } = await seed(client, ada);
    mkdirSync(outDir, { recursive: true });
    for (const [width, height] of [[360, 780], [1920, 1080]] as const) {
      const context = await browser.newContext({ viewport: { width, height } });
      const page = await context.newPage();
      await page.goto(`${store.url}/`);
      await page.getByLabel('Username or email').fill('ada@example.test');
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
      const shoot = async (name: string, url: string, ready: () => Promise<unknown>, before?: () => Promise<unknown>) => {
        await page.goto(`${store.url}${url}`);
        await ready();
        await before?.();
        // Lazy thumbnails: wait until every image in view has loaded (or given up).
        await page.waitForFunction('[...document.images].every((img) => img.complete)');
        const file = path.join(outDir, `${name}-${width}.png`);
        const raw = await page.screenshot({ fullPage: false });
        let png = await sharp(raw).png({ palette: true, quality: 90, compressionLevel: 9, effort: 10 }).toBuffer();
        if (png.length > MAX_PNG_BYTES) png = await sharp(raw).png({ palette: true, colours: 64, compressionLevel: 9, effort: 10 }).toBuffer();
        writeFileSync(file, png);
        console.log(`${path.relative(root, file)}  ${png.length} bytes`);
      };
      await shoot('files', '/files', () => page.getByRole('link', { name: 'Cover.jpg' }).waitFor());
      await shoot('folder', `/files/${holiday}`, () => page.getByRole('link', { name: 'Mountains.jpg' }).waitFor());
      await shoot('details', `/item/${photo}`, () => page.getByRole('img', { name: /Thumbnail of/ }).waitFor());
      if (width === 360) await shoot('menu', '/files', () => page.getByRole('link', { name: 'Cover.jpg' }).waitFor(), () => page.getByRole('button', { name: 'Menu' }).click());
      await context.close();
    }
  } finally {
    await browser.close();
    await client.close();
    await store.close();
    rmSync(webDir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
