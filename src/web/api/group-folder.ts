/**
 * A group drive's folder name on the bridge (`/groups/<name>/`), from the function the bridge
 * itself calls (src/shared/group-folder-names.ts), so the page never builds a path the bridge
 * does not have. Pure: the unit tests call it beside the bridge's groupSegments.
 */
import { groupFolderNames } from '../../shared/group-folder-names.js';

export interface NamedGroup {
  group_uuid: string;
  group_name: string;
}

/** `group`'s folder name among the caller's `groups`; undefined when it is not one of them. */
export function groupFolderName(group: NamedGroup, groups: readonly NamedGroup[]): string | undefined {
  for (const [name, g] of groupFolderNames(groups, (x) => ({ id: x.group_uuid, name: x.group_name }))) if (g.group_uuid === group.group_uuid) return name;
  return undefined;
}
