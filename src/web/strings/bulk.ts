/** The words of bulk work (issue 31 item 8): selection, its toolbar, the filter, zip downloads, restoring several. */
const items = (n: number) => `${n.toLocaleString()} item${n === 1 ? '' : 's'}`;

export const bulk = {
  selectAll: 'Select all items shown',
  selectNamed: (name: string) => `Select ${name}`,
  selectColumn: 'Select',
  selected: (n: number) => `${items(n)} selected`,
  selectionBar: 'Selected items',
  clear: 'Clear the selection',
  move: 'Move…',
  copy: 'Copy…',
  trash: 'Move to trash',
  zip: 'Download as zip',
  zipTooMany: (max: number) => `A zip holds at most ${max} selected items: select fewer, or download their folder as a zip.`,
  zipFolder: 'Download folder as zip',
  moveTitle: (n: number) => `Move ${items(n)}`,
  copyTitle: (n: number) => `Copy ${items(n)}`,
  working: (done: number, all: number) => `Working… ${done} of ${all} done.`,
  /** The summary of one action over several items: what worked, then what did not. */
  summary: (verb: 'moved' | 'copied' | 'trashed' | 'restored', ok: number, failed: number, where?: string) => {
    const did = { moved: `moved to ${where ?? ''}`, copied: `copied to ${where ?? ''}`, trashed: 'moved to the trash', restored: 'restored' }[verb];
    if (failed === 0) return `${items(ok)} ${did}.`;
    if (ok === 0) return `Nothing ${did}: ${items(failed)} failed.`;
    return `${items(ok)} ${did}; ${items(failed)} failed.`;
  },
  failures: 'What failed',
  failedItem: (name: string, why: string) => `${name}: ${why}`,
  filter: 'Filter this folder by name',
  filterCount: (shown: number, all: number) => (shown === all ? `${items(all)}` : `${shown.toLocaleString()} of ${items(all)} match the filter`),
  filterNone: 'Nothing here matches the filter.',
  windowed: 'This folder is long: only the rows in view are drawn, so the browser’s Find sees those only. Use the filter box to find a name.',
  restoreSelected: (n: number) => `Restore ${items(n)}`,
  selectTrash: (name: string) => `Select ${name} to restore`,
} as const;
