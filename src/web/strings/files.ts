/** Every word of the file browser (issue 24, item 4): pages/files.tsx and its components. */
export const files = {
  nav: 'Files',
  title: 'Files',
  drives: 'Drives',
  home: 'Home',
  sharedWithMe: 'Shared with me',
  topLevel: {
    home: 'Home',
    incoming: 'Incoming',
    trash: 'Trash',
    public_shares: 'Public links',
    private_shares: 'Private shares',
    favorites: 'Favorites',
    shared_with_you: 'Shared with me',
  } as Record<string, string>,
  breadcrumbs: 'Where you are',
  notFound: 'This folder does not exist, or you may not see it.',
  backHome: 'Go to your home folder',
  empty: 'This folder is empty.',
  count: (n: number) => `${n.toLocaleString()} item${n === 1 ? '' : 's'}`,
  listLabel: (folder: string) => `Contents of ${folder}`,
  name: 'Name',
  size: 'Size',
  modified: 'Modified',
  actionsColumn: 'Actions',
  sortBy: (column: string, direction: 'ascending' | 'descending' | undefined) =>
    `Sort by ${column}${direction ? ` (now ${direction}; choose to reverse)` : ''}`,
  folderKind: 'Folder',
  bytes: (n: number) => {
    if (n < 1024) return `${n} B`;
    const units = ['KB', 'MB', 'GB', 'TB'];
    let value = n / 1024;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit += 1;
    }
    return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
  },
  star: (name: string) => `Star ${name}`,
  unstar: (name: string) => `Remove the star from ${name}`,
  actionsFor: (name: string) => `Actions for ${name}`,
  actions: 'Actions',
  details: 'Details',
  detailsOf: (name: string) => `Details of ${name}`,
  share: 'Share',
  shareOf: (name: string) => `Share ${name}`,
  download: 'Download',
  rename: 'Rename',
  move: 'Move',
  copy: 'Copy',
  delete: 'Move to trash',
  close: 'Close',
  cancel: 'Cancel',
  // New folder
  newFolder: 'New folder',
  newFolderName: 'Name of the new folder',
  create: 'Create folder',
  created: (name: string) => `Folder ${name} created.`,
  nameMissing: 'Enter a name.',
  // Rename
  renameTitle: (name: string) => `Rename ${name}`,
  newName: 'New name',
  renamed: (from: string, to: string) => `${from} is now called ${to}.`,
  // Move and copy
  moveTitle: (name: string) => `Move ${name}`,
  copyTitle: (name: string) => `Copy ${name}`,
  pickerIntro: 'Open the folder to put it in, then choose the button below.',
  pickerDrive: 'Drive',
  pickerUp: 'Up one folder',
  pickerOpen: (name: string) => `Open ${name}`,
  pickerNoFolders: 'No folders here.',
  pickerIn: (where: string) => `Folder chosen: ${where}`,
  moveHere: 'Move here',
  copyHere: 'Copy here',
  moved: (name: string, where: string) => `${name} moved to ${where}.`,
  copied: (name: string, where: string) => `${name} copied to ${where}.`,
  // Delete
  deleted: (name: string) => `${name} is in the trash.`,
  goTrash: 'Open the trash',
  // Upload
  upload: 'Upload',
  uploadFiles: 'Upload files',
  uploadFolder: 'Upload a folder',
  dropHint: 'Or drop files and folders here.',
  dropZone: 'Drop files and folders here to upload them',
  dropNow: 'Drop to upload into this folder',
  uploads: 'Uploads',
  overall: (done: number, all: number) => `Overall: ${done} of ${all} files`,
  overallLabel: 'All uploads',
  fileProgress: (name: string) => `Upload of ${name}`,
  uploadDone: 'Done',
  uploadWaiting: 'Waiting',
  uploading: 'Uploading',
  uploadFailed: (why: string) => `Failed: ${why}`,
  resumable: 'resumable',
  uploadsFinished: (ok: number, failed: number) =>
    failed === 0 ? `All ${ok} uploads finished.` : `${ok} uploads finished, ${failed} failed.`,
  clearUploads: 'Clear finished uploads',
  readOnly: 'You may only look at this folder: uploading and changing things here is not allowed.',
  // Errors
  quotaExceeded: 'There is no room left in this drive (its quota is used up).',
  rowFailed: (name: string, why: string) => `${name}: ${why}`,
  conflict: (name: string) => `Something named ${name} is already here.`,
} as const;
