/**
 * The app's icons, drawn inline (no file fetched, nothing outside the bundle): file kinds for the
 * listing and Details, and the navigation's. Every icon is decoration beside words that say the
 * same (aria-hidden), so none needs a name of its own. A file's kind is read from its name's
 * extension, as Seafile's and Nextcloud's lists do; what the store may decode is the store's
 * decision (a thumbnail that fails shows the icon).
 */
import type { JSX } from 'preact';

export type FileKind = 'folder' | 'image' | 'video' | 'audio' | 'pdf' | 'code' | 'archive' | 'document' | 'spreadsheet' | 'presentation' | 'other';

const EXTENSIONS: Record<Exclude<FileKind, 'folder' | 'other'>, string> = {
  image: 'jpg jpeg png gif webp avif heic heif bmp tif tiff svg ico raw cr2 nef dng',
  video: 'mp4 m4v mov mkv webm avi wmv mpg mpeg 3gp ogv',
  audio: 'mp3 m4a aac flac wav ogg oga opus wma aiff mid midi',
  pdf: 'pdf',
  code: 'txt md markdown log csv tsv json yaml yml xml html htm css js mjs ts tsx jsx py rb go rs java c h cpp hpp cs php sh bash zsh ps1 sql toml ini conf cfg',
  archive: 'zip tar gz tgz bz2 xz zst 7z rar iso dmg',
  document: 'doc docx odt rtf pages epub',
  spreadsheet: 'xls xlsx ods numbers',
  presentation: 'ppt pptx odp key',
};

const BY_EXTENSION = new Map<string, FileKind>(Object.entries(EXTENSIONS).flatMap(([kind, list]) => list.split(' ').map((ext) => [ext, kind as FileKind] as const)));

/** What a node is, to the eye: a folder, or a file's kind by its extension. */
export function fileKind(name: string, isFolder: boolean): FileKind {
  if (isFolder) return 'folder';
  const dot = name.lastIndexOf('.');
  return (dot > 0 && BY_EXTENSION.get(name.slice(dot + 1).toLowerCase())) || 'other';
}

/** Names whose bytes the store may make a thumbnail of (ops/thumbnails.ts decides; this only avoids asking for the rest). */
export function mayHaveThumbnail(name: string): boolean {
  return /\.(?:jpe?g|png|gif|webp|avif|heic|heif)$/i.test(name);
}

/** What is drawn on the page of each kind (24 x 24), and its colour. */
const GLYPH: Record<Exclude<FileKind, 'folder'>, { color: string; draw: JSX.Element | null }> = {
  image: { color: '#2f7d32', draw: <path d="M8 18l3-4.5 2 2.5 2.5-3.5L18 18zM10 10.5a1.5 1.5 0 1 0 .01 0" /> },
  video: { color: '#b3261e', draw: <path d="M10 11v7l6-3.5z" /> },
  audio: { color: '#7b3fa6', draw: <path d="M15 9.5v6.2a2 2 0 1 1-1.2-1.8V11.5l-3.5.8v4.4a2 2 0 1 1-1.2-1.8v-4.6z" /> },
  pdf: { color: '#c0392b', draw: <path d="M8.5 12h7v1.4h-7zM8.5 15h7v1.4h-7zM8.5 18h4.5v1.4H8.5z" /> },
  code: { color: '#455a75', draw: <path d="M10.6 12.2l-2.8 2.8 2.8 2.8-1 1L5.8 15l3.8-3.8zM13.4 12.2l1-1 3.8 3.8-3.8 3.8-1-1 2.8-2.8z" /> },
  archive: { color: '#8a5a00', draw: <path d="M11 3h2v2h-2zM11 6h2v2h-2zM11 9h2v2h-2zM10 12h4v5h-4zm1.2 1.2v2.6h1.6v-2.6z" /> },
  document: { color: '#1f5fbf', draw: <path d="M8.5 11h7v1.4h-7zM8.5 14h7v1.4h-7zM8.5 17h5v1.4h-5z" /> },
  spreadsheet: { color: '#1e7b45', draw: <path d="M8 11h8v8H8zm1.3 1.3v2h2.1v-2zm3.3 0v2h2.1v-2zm-3.3 3.3v2.1h2.1v-2.1zm3.3 0v2.1h2.1v-2.1z" /> },
  presentation: { color: '#c25400', draw: <path d="M7.5 11h9v6h-9zm1.3 1.3v3.4h6.4v-3.4zM11.3 17h1.4v2.5h-1.4z" /> },
  other: { color: '#5f6673', draw: null },
};

const LABEL: Partial<Record<FileKind, string>> = { pdf: 'PDF' };

/** A file-kind icon, `size` px square; decoration beside the name. */
export function FileIcon({ kind, size = 24 }: { kind: FileKind; size?: number }) {
  if (kind === 'folder') {
    return (
      <svg class="icon icon-folder" width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" focusable="false">
        <path fill="#d99a1e" d="M2 5.5A1.5 1.5 0 0 1 3.5 4h5.2l2 2.2h9.8A1.5 1.5 0 0 1 22 7.7v10.8a1.5 1.5 0 0 1-1.5 1.5h-17A1.5 1.5 0 0 1 2 18.5z" />
        <path fill="#f2bd42" d="M2 9h20v9.5a1.5 1.5 0 0 1-1.5 1.5h-17A1.5 1.5 0 0 1 2 18.5z" />
      </svg>
    );
  }
  const { color, draw } = GLYPH[kind];
  const label = LABEL[kind];
  return (
    <svg class={`icon icon-${kind}`} width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path fill="#fff" stroke={color} stroke-width="1.3" stroke-linejoin="round" d="M5.5 1.7h9l4.8 4.8v15.8h-13.8z" />
      <path fill={color} d="M14.5 1.7v4.8h4.8z" />
      {label ? (
        <>
          <rect x="3" y="8" width="13" height="6" rx="1" fill={color} />
          <text x="9.5" y="12.6" fill="#fff" font-size="5" font-weight="700" text-anchor="middle" font-family="system-ui, sans-serif">
            {label}
          </text>
          <g fill={color}>
            <path d="M8.5 16h7v1.3h-7zM8.5 18.5h5v1.3h-5z" />
          </g>
        </>
      ) : (
        draw && <g fill={color}>{draw}</g>
      )}
    </svg>
  );
}

export type NavIconName = 'files' | 'connect' | 'account' | 'favorites' | 'trash' | 'shares' | 'requests' | 'notifications' | 'groups' | 'admin' | 'menu' | 'close';

const NAV_PATHS: Record<NavIconName, string> = {
  files: 'M3 6.5A1.5 1.5 0 0 1 4.5 5h4.2l2 2h8.8A1.5 1.5 0 0 1 21 8.5v9a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 17.5z',
  connect: 'M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1',
  account: 'M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4.5 20a7.5 7.5 0 0 1 15 0',
  favorites: 'M12 3.5l2.6 5.3 5.9.9-4.3 4.1 1 5.8-5.2-2.7-5.2 2.7 1-5.8-4.3-4.1 5.9-.9z',
  trash: 'M4 7h16M9.5 7V4.5h5V7M6 7l1 13h10l1-13M10 11v5M14 11v5',
  shares: 'M17 8a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM7 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM17 22a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM9.6 13.5l4.8 3M14.4 6.5l-4.8 3',
  requests: 'M4 13l3-8h10l3 8v6H4zM4 13h5l1 2h4l1-2h5',
  notifications: 'M6 16V11a6 6 0 0 1 12 0v5l1.5 2h-15zM10 20a2 2 0 0 0 4 0',
  groups: 'M9 11a3.5 3.5 0 1 0 0-7 3.5 3.5 0 0 0 0 7zM2.5 20a6.5 6.5 0 0 1 13 0M16 4.3a3.5 3.5 0 0 1 0 6.4M18 14a6.5 6.5 0 0 1 3.5 6',
  admin: 'M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM19.4 15a1.7 1.7 0 0 0 .3 1.8l.1.1a2 2 0 1 1-2.8 2.8l-.1-.1a1.7 1.7 0 0 0-2.9 1.2V21a2 2 0 1 1-4 0v-.1a1.7 1.7 0 0 0-2.9-1.2l-.1.1a2 2 0 1 1-2.8-2.8l.1-.1a1.7 1.7 0 0 0-1.2-2.9H3a2 2 0 1 1 0-4h.1a1.7 1.7 0 0 0 1.2-2.9l-.1-.1a2 2 0 1 1 2.8-2.8l.1.1a1.7 1.7 0 0 0 2.9-1.2V3a2 2 0 1 1 4 0v.1a1.7 1.7 0 0 0 2.9 1.2l.1-.1a2 2 0 1 1 2.8 2.8l-.1.1a1.7 1.7 0 0 0 1.2 2.9h.1a2 2 0 1 1 0 4h-.1a1.7 1.7 0 0 0-1.5 1z',
  menu: 'M4 6h16M4 12h16M4 18h16',
  close: 'M6 6l12 12M18 6L6 18',
};

/** A line icon of the navigation (stroke in the text's colour). */
export function NavIcon({ name }: { name: NavIconName }) {
  return (
    <svg class="icon nav-icon" width="20" height="20" viewBox="0 0 24 24" aria-hidden="true" focusable="false" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round">
      <path d={NAV_PATHS[name]} />
    </svg>
  );
}
