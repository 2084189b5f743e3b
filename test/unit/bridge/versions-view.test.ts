/**
 * The names and ids of `/versions/` (versions-view.ts): a revision is named by its UTC time,
 * sortable and without `:`; revisions of one second get milliseconds, of one millisecond the
 * revision number too, so every name is distinct; a revision's id names its file and number;
 * only Finder and Explorer are shown the view in the root.
 */
import { describe, expect, it } from 'vitest';
import type { RevisionEntry } from '../../../src/store-client/contract.js';
import { isVersionsId, listsVersionsTo, revisionNames, revisionOfId } from '../../../src/bridge/versions-view.js';

const at = (revision: number, createdMs: number): RevisionEntry => ({ revision, sizeBytes: 1, createdMs });

describe('revisionNames', () => {
  it('names by UTC second, sortable, with no colon', () => {
    const names = revisionNames('report.odt', [at(1, Date.UTC(2026, 10, 28, 10, 15, 0)), at(2, Date.UTC(2026, 10, 28, 10, 16, 5))]);
    expect(names).toEqual(['2026-11-28T10.15.00Z report.odt', '2026-11-28T10.16.05Z report.odt']);
    expect([...names].sort()).toEqual(names);
  });

  it('gives milliseconds to revisions of one second, and the number to those of one millisecond', () => {
    const second = Date.UTC(2026, 10, 28, 10, 15, 0);
    const names = revisionNames('a.txt', [at(1, second + 5), at(2, second + 5), at(3, second + 120), at(4, second + 2000)]);
    expect(names).toEqual([
      '2026-11-28T10.15.00.005Z r1 a.txt',
      '2026-11-28T10.15.00.005Z r2 a.txt',
      '2026-11-28T10.15.00.120Z a.txt',
      '2026-11-28T10.15.02Z a.txt',
    ]);
    expect(new Set(names).size).toBe(4);
  });
});

describe('ids and clients', () => {
  it('a revision id names its file and number; the view ids are recognised, store ids are not', () => {
    expect(revisionOfId('revision:7:cd5c4423-930f-463a-a0a8-c4b135e74f7c')).toEqual({ file: 'cd5c4423-930f-463a-a0a8-c4b135e74f7c', revision: 7 });
    expect(revisionOfId('cd5c4423-930f-463a-a0a8-c4b135e74f7c')).toBeUndefined();
    expect(revisionOfId('revision:x:abc')).toBeUndefined();
    expect(isVersionsId('versions-of:home')).toBe(true);
    expect(isVersionsId('home')).toBe(false);
    expect(isVersionsId('group:abc')).toBe(false);
  });

  it('lists /versions/ in the root for Finder and Explorer only', () => {
    expect(listsVersionsTo('WebDAVFS/3.0.0 (03008000) Darwin/22.1.0 (arm64)')).toBe(true);
    expect(listsVersionsTo('Microsoft-WebDAV-MiniRedir/10.0.19045')).toBe(true);
    expect(listsVersionsTo('rclone/v1.60.1')).toBe(false);
    expect(listsVersionsTo('davfs2/1.7.0 neon/0.33.0')).toBe(false);
    expect(listsVersionsTo(undefined)).toBe(false);
  });
});
