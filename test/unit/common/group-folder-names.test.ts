/**
 * A group drive's folder name (src/shared/group-folder-names.ts): the bridge's `/groups/<name>/`
 * and the web app's URL of a group folder on the bridge come from one function and so agree,
 * long names cut at 240 bytes on a whole character, case-equal names told apart by UUID.
 */
import { describe, expect, it } from 'vitest';
import { groupSegments } from '../../../src/bridge/namespace.js';
import { GROUP_FOLDER_MAX_BYTES, groupFolderBase, groupFolderNames } from '../../../src/shared/group-folder-names.js';
import type { GroupEntry } from '../../../src/store-client/contract.js';
import { groupFolderName } from '../../../src/web/api/group-folder.js';

const bytes = (s: string) => new TextEncoder().encode(s).length;

const groups = [
  { group_uuid: 'b0000000-0000-4000-8000-000000000002', group_name: 'Team' },
  { group_uuid: 'a0000000-0000-4000-8000-000000000001', group_name: 'team' },
  { group_uuid: 'c0000000-0000-4000-8000-000000000003', group_name: 'é'.repeat(200) },
  { group_uuid: 'd0000000-0000-4000-8000-000000000004', group_name: 'x'.repeat(300) },
  { group_uuid: 'e0000000-0000-4000-8000-000000000005', group_name: 'a/b\\c' },
  { group_uuid: 'f0000000-0000-4000-8000-000000000006', group_name: '..' },
  { group_uuid: '10000000-0000-4000-8000-000000000007', group_name: `${'😀'.repeat(61)}` },
];

describe('group drive folder names', () => {
  it('cuts a long name at 240 bytes on a whole character', () => {
    expect(bytes(groupFolderBase('é'.repeat(200)))).toBe(240);
    expect(groupFolderBase('x'.repeat(300))).toBe('x'.repeat(GROUP_FOLDER_MAX_BYTES));
    // 61 four-byte characters are 244 bytes: 60 whole ones fit, no half of the 61st.
    expect(groupFolderBase('😀'.repeat(61))).toBe('😀'.repeat(60));
    expect(groupFolderBase('a/b\\c')).toBe('a_b_c');
    expect(groupFolderBase('..')).toBe('group ..');
  });

  it('tells case-equal names apart by UUID, the lower UUID keeping the plain name', () => {
    const names = [...groupFolderNames(groups, (g) => ({ id: g.group_uuid, name: g.group_name })).entries()].map(([name, g]) => [name, g.group_uuid]);
    expect(names).toContainEqual(['team', 'a0000000-0000-4000-8000-000000000001']);
    expect(names).toContainEqual(['Team (b0000000)', 'b0000000-0000-4000-8000-000000000002']);
  });

  it('gives the bridge and the web app the same name for every group', () => {
    const bridge = groupSegments(groups.map((g) => ({ id: g.group_uuid, name: g.group_name }) as GroupEntry));
    for (const [name, entry] of bridge) expect(groupFolderName({ group_uuid: entry.id, group_name: entry.name }, groups)).toBe(name);
    expect(bridge.size).toBe(groups.length);
  });
});
