/** Words of the uploads list, the name-conflict question and the usage bar (components/files-upload.tsx, usage.tsx). */
import { files } from './files.js';

const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

export const uploads = {
  waitingServer: 'Waiting for the server: this goes on by itself when it answers.',
  waitingServerResend: 'Waiting for the server: when it answers, this file is sent again from its start (this upload cannot resume).',
  waitingNotice: 'The server cannot be reached. The uploads wait for it and go on by themselves when it answers.',
  cancelled: 'Cancelled',
  skipped: 'Skipped (a file of that name is here)',
  cancel: (name: string) => `Cancel upload of ${name}`,
  retry: (name: string) => `Retry upload of ${name}`,
  cancelLabel: 'Cancel',
  retryLabel: 'Retry',
  retryFailed: 'Retry the failed ones',
  /** The batch's one line: counts of each state there is. */
  counts: (c: { done: number; failed: number; waiting: number; active: number; queued: number; skipped: number; cancelled: number }) =>
    [
      c.done > 0 && `${c.done.toLocaleString('en')} done`,
      c.active > 0 && `${c.active.toLocaleString('en')} uploading`,
      c.queued > 0 && `${c.queued.toLocaleString('en')} queued`,
      c.waiting > 0 && `${c.waiting.toLocaleString('en')} waiting for the server`,
      c.failed > 0 && `${c.failed.toLocaleString('en')} failed`,
      c.skipped > 0 && `${c.skipped.toLocaleString('en')} skipped`,
      c.cancelled > 0 && `${c.cancelled.toLocaleString('en')} cancelled`,
    ]
      .filter(Boolean)
      .join(', '),
  eachFile: (n: number) => `Each file (${n.toLocaleString('en')})`,
  finished: (ok: number, failed: number, other: number) =>
    failed === 0 && other === 0
      ? ok === 1
        ? '1 upload finished.'
        : `All ${ok.toLocaleString('en')} uploads finished.`
      : `${plural(ok, 'upload', 'uploads')} finished, ${failed.toLocaleString('en')} failed${other > 0 ? `, ${other.toLocaleString('en')} skipped or cancelled` : ''}.`,
  /** Refused before any byte moved, or by the server's 507: what the file needs and what is left. */
  noRoom: (needed: number, left: number, quota: number) =>
    `Not enough room: this file needs ${files.bytes(needed)}, and ${left <= 0 ? 'nothing is' : `${files.bytes(left)} is`} left of the ${files.bytes(quota)} quota.`,
  // The name-conflict question
  conflictTitle: 'A file of this name is here',
  conflictText: (name: string) => `${name} is already in this folder. What should happen to the one you are uploading?`,
  replace: 'Replace it (as a new revision; the old one stays in its history)',
  keepBoth: (other: string) => `Keep both (upload this one as ${other})`,
  skip: 'Skip this file',
  applyToAll: 'Do the same for the other files of this upload with the same question',
  // Usage
  usageLabel: 'Storage used',
  usedOf: (used: number, quota: number) => `${files.bytes(used)} of ${files.bytes(quota)} used`,
  usedUnlimited: (used: number) => `${files.bytes(used)} used (no limit)`,
} as const;
