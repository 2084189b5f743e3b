/**
 * decodeAvatar: the type comes from the bytes, never from the data URL's prefix; size and side
 * limits; '' resets. storeAvatar/avatarAt/avatarUrl on a real database: the version follows the
 * bytes, an old version is gone, removal empties the link.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/common/config.js';
import { systemClock } from '../../../src/common/clock.js';
import { createLogger } from '../../../src/common/logger.js';
import type { StoreContext } from '../../../src/store/context.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { openDatabase } from '../../../src/store/storage/dialects/sqlite-open.js';
import { StoreHttpError } from '../../../src/store/envelope.js';
import { avatarAt, avatarUrl, decodeAvatar, storeAvatar } from '../../../src/store/ops/avatars.js';
import { dataUrl, jpegBytes, pngBytes } from '../../helpers/images.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

function refusal(value: string, maxBytes = 10_000): string {
  try {
    decodeAvatar(value, maxBytes);
  } catch (err) {
    expect(err).toBeInstanceOf(StoreHttpError);
    expect((err as StoreHttpError).statusCode).toBe(400);
    return (err as StoreHttpError).message;
  }
  throw new Error('accepted');
}

describe('decodeAvatar', () => {
  it('accepts a PNG and a JPEG and reports the type their bytes have', () => {
    expect(decodeAvatar(dataUrl(pngBytes()), 10_000)).toEqual({ contentType: 'image/png', bytes: pngBytes() });
    expect(decodeAvatar(dataUrl(jpegBytes(), 'image/jpeg'), 10_000)?.contentType).toBe('image/jpeg');
  });

  it('trusts the bytes, not the prefix: a PNG labelled JPEG is a PNG, text labelled PNG is refused', () => {
    expect(decodeAvatar(dataUrl(pngBytes(), 'image/jpeg'), 10_000)?.contentType).toBe('image/png');
    expect(refusal(dataUrl(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/png'))).toMatch(/^avatar: .*not a PNG or JPEG/);
    const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
    expect(refusal(dataUrl(gif, 'image/png'))).toMatch(/not a PNG or JPEG/);
  });

  it('answers null for the empty string (back to the default)', () => {
    expect(decodeAvatar('', 10)).toBeNull();
  });

  it('refuses what is not a base64 data URL, an empty one, one too large and one too wide', () => {
    expect(refusal('http://example.org/me.png')).toMatch(/data URL/);
    expect(refusal('data:image/png;base64,')).toMatch(/no bytes/);
    expect(refusal('data:image/png;base64,%%%')).toMatch(/data URL/);
    expect(refusal(dataUrl(pngBytes(40, 40)), 100)).toMatch(/larger than 100 bytes/);
    expect(refusal(dataUrl(jpegBytes(5000, 10), 'image/jpeg'))).toMatch(/4096 pixels/);
  });
});

describe('avatar rows', () => {
  const tmp = makeTmpDir();
  const db = openDatabase(path.join(tmp.dir, 'avatars.sqlite'));
  const storage = new SqliteStorage(db);
  const sql = storage.sql;
  const config = loadConfig({ env: {}, flags: { dataDir: tmp.dir } });
  const ctx = { storage, db, config, clock: systemClock, log: createLogger('silent') } as unknown as StoreContext;
  const owner = '11111111-2222-4333-8444-555555555555';
  afterAll(() => {
    db.close();
    tmp.remove();
  });

  it('links a stored avatar by a version that follows its bytes, and forgets old versions', async () => {
    expect((await avatarUrl(ctx, owner))).toBe('');
    await storeAvatar(sql, owner, { contentType: 'image/png', bytes: pngBytes() }, 1);
    const first = (await avatarUrl(ctx, owner));
    expect(first).toMatch(new RegExp(`^/avatars/${owner}/[\\w-]{16}$`));
    const firstVersion = first.split('/').pop() as string;
    expect(await avatarAt(sql, owner, firstVersion)).toMatchObject({ contentType: 'image/png', bytes: pngBytes() });

    await storeAvatar(sql, owner, { contentType: 'image/jpeg', bytes: jpegBytes() }, 2);
    const second = (await avatarUrl(ctx, owner));
    expect(second).not.toBe(first);
    expect(await avatarAt(sql, owner, firstVersion)).toBeUndefined();
    expect((await avatarAt(sql, owner, second.split('/').pop() as string))?.contentType).toBe('image/jpeg');

    await storeAvatar(sql, owner, null, 3);
    expect((await avatarUrl(ctx, owner))).toBe('');
  });

  it('makes the link absolute when store.publicUrl is set', async () => {
    await storeAvatar(sql, owner, { contentType: 'image/png', bytes: pngBytes() }, 4);
    const withBase = { ...ctx, config: { ...config, store: { ...config.store, publicUrl: 'https://files.example.org/' } } } as StoreContext;
    expect((await avatarUrl(withBase, owner))).toMatch(new RegExp(`^https://files\\.example\\.org/avatars/${owner}/`));
  });
});
