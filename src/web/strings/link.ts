/** Every word of a link's page (pages/link.tsx): what the person a link was sent to reads, with no account. */
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export const link = {
  uploadTitle: 'Send files',
  passwordTitle: 'This link has a password',
  goneTitle: 'This link does not work',
  loadingTitle: 'Opening the link…',
  sharedWithYou: 'Someone shared this with you. You need no account to open it.',
  expiresOn: (when: number) => `This link works until ${dateFormat.format(new Date(when))}.`,
  date: (when: number) => dateFormat.format(new Date(when)),

  // A password link.
  passwordIntro: 'Type the password you were given with the link.',
  password: 'Password',
  open: 'Open',
  opening: 'Opening…',
  passwordEmpty: 'Type the password first.',
  wrongPassword: 'That password is not right. Check it and try again.',
  tooManyTries: (wait: string) => `Too many wrong passwords for this link. Try again in ${wait}.`,

  // Gone or unknown.
  expired: 'This link has expired. Ask the person who sent it for a new one.',
  unknown: 'There is no link at this address: it was removed, or the address is not complete. Check it, or ask the person who sent it for a new one.',
  nothingHere: 'There is nothing of that name in this shared folder any more.',
  backToTop: 'Back to the shared folder',

  // A file.
  size: 'Size',
  modified: 'Modified',
  download: 'Download',
  downloadNamed: (name: string) => `Download ${name}`,
  preview: 'Preview',
  previewOf: (name: string) => `Preview of ${name}`,
  previewLoading: 'Looking for a preview…',
  noPreview: 'No preview for this kind of file: download it to open it. Only images and plain text are shown here.',

  // A folder.
  where: 'Where you are',
  downloadAll: 'Download all (zip)',
  downloadAllOf: (name: string) => `Download all of ${name} as a zip file`,
  name: 'Name',
  folder: 'Folder',
  empty: 'This folder is empty.',
  count: (n: number) => `${n.toLocaleString()} item${n === 1 ? '' : 's'}`,
  openFolder: (name: string) => `Open folder ${name}`,

  // An upload link.
  uploadIntro: 'Files you send here go to the person who shared this link. You cannot see what others sent, and others cannot see what you send.',
  dropZone: 'Drop files here to send them',
  dropNow: 'Drop to send',
  pick: 'Choose files…',
  pickLabel: 'Files to send',
  sent: 'What you sent',
  sentSummary: (done: number, all: number) => `${done} of ${all} file${all === 1 ? '' : 's'} received.`,
  progressOf: (name: string) => `Sending ${name}`,
  waiting: 'Waiting',
  sending: (percent: number) => `Sending, ${percent} %`,
  received: (name: string, size: string) => (name === '' ? `Received (${size})` : `Received as ${name} (${size})`),
  failed: (why: string) => `Not received: ${why}`,
  noRoom: 'There is no room left for this file in the shared folder.',
  notResumable: 'A file whose sending breaks off starts again from the beginning when sent again.',
};
