/**
 * A node's picture in a list or in Details: the store's thumbnail of an image file (loaded lazily,
 * as the row scrolls into view), and the kind's icon for everything else and whenever the store
 * has none (it answers 404 for what it will not decode: the image's error event falls back).
 * A 256 px thumbnail offers the 1024 px one to screens with more pixels per CSS pixel.
 */
import { useState } from 'preact/hooks';
import { thumbnailUrl } from '../api/item.js';
import { FileIcon, fileKind, mayHaveThumbnail } from './icons.js';

interface Shown {
  uuid: string;
  name: string;
  type: 'File' | 'Dir';
  revision?: number;
}

export function FileThumb({ node, px, size, alt = '', mayRead = true }: { node: Shown; px: 64 | 256; size: number; alt?: string; mayRead?: boolean }) {
  const isFolder = node.type === 'Dir';
  const url = mayRead && !isFolder && mayHaveThumbnail(node.name) ? thumbnailUrl(node, px, node.revision) : undefined;
  const [failed, setFailed] = useState<string | undefined>();
  if (!url || failed === url) return <FileIcon kind={fileKind(node.name, isFolder)} size={size} />;
  const large = px === 256 ? thumbnailUrl(node, 1024, node.revision) : undefined;
  return (
    <img
      class="thumb"
      src={url}
      srcset={large ? `${url} 256w, ${large} 1024w` : undefined}
      sizes={large ? `${size}px` : undefined}
      alt={alt}
      width={size}
      height={size}
      loading="lazy"
      decoding="async"
      onError={() => setFailed(url)}
    />
  );
}
