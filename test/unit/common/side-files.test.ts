/**
 * The one rule naming macOS side files (src/common/side-files.ts): which names are Finder's,
 * that folders never are, which name a file's twin has, and which user agents are Finder.
 */
import { describe, expect, it } from 'vitest';
import { appleDoubleOf, isFinderAgent, isMacSideEntry, isMacSideFile } from '../../../src/common/side-files.js';

describe('macOS side files', () => {
  it('names `._<name>` and `.DS_Store`, and nothing else', () => {
    for (const name of ['._x.txt', '._.', '._Photos Library', '.DS_Store']) expect(isMacSideFile(name), name).toBe(true);
    for (const name of ['._', '.DS_Store.bak', 'x.DS_Store', '.ds_store', '_._x', '.x', 'a._b', '.localized']) expect(isMacSideFile(name), name).toBe(false);
  });

  it('counts only files: a folder named like one is ordinary', () => {
    expect(isMacSideEntry({ name: '._x', isFile: true })).toBe(true);
    expect(isMacSideEntry({ name: '._x', isFile: false })).toBe(false);
    expect(isMacSideEntry({ name: '.DS_Store', isFile: false })).toBe(false);
  });

  it('gives a file its `._` twin, and a side file none', () => {
    expect(appleDoubleOf('report.pdf')).toBe('._report.pdf');
    expect(appleDoubleOf('._report.pdf')).toBeUndefined();
    expect(appleDoubleOf('.DS_Store')).toBeUndefined();
  });

  it('knows Finder by WebDAVFS in the User-Agent', () => {
    expect(isFinderAgent('WebDAVFS/3.0.0 (03008000) Darwin/24.4.0 (arm64)')).toBe(true);
    expect(isFinderAgent('WebDAVLib/1.3')).toBe(false);
    expect(isFinderAgent('rclone/v1.60.1-DEV')).toBe(false);
    expect(isFinderAgent(undefined)).toBe(false);
  });
});
