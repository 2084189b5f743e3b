/**
 * A preview of a file from a view URL the store serves inline (Details' view path, an approver's
 * preview of a request): an `<iframe sandbox="">` (no script, an opaque origin, with the store's
 * own sandboxing CSP and nosniff on the bytes: docs/content-security.md), and only for what the
 * store sends inline as an image or plain text (asked with a HEAD: previewKind); anything else
 * gets no frame at all.
 *
 * An image the store makes thumbnails of (Details passes `thumbnail`, the 1,024 px one) is shown
 * from that thumbnail instead: a few hundred KiB scaled to the column, never a 40-megapixel photo
 * at its natural size. When the store makes none after all (the bytes are not what the name says,
 * too large), the image's error event falls back to the frame.
 */
import { useState } from 'preact/hooks';
import { previewKind } from '../api/item.js';
import { useResource } from '../api/use-resource.js';
import { t } from '../strings/index.js';
import { mayHaveThumbnail } from './icons.js';

export function FilePreview({ url, name, thumbnail }: { url: string | undefined; name: string; thumbnail?: string | undefined }) {
  const [failed, setFailed] = useState<string | undefined>();
  const fromThumbnail = thumbnail !== undefined && failed !== thumbnail && mayHaveThumbnail(name);
  // No HEAD while the thumbnail is shown: asked only for the frame.
  const { data: kind, loading } = useResource(async () => (url && !fromThumbnail ? ((await previewKind(url)) ?? 'none') : 'none'), [url, fromThumbnail]);
  if (!url) return <p>{t.item.noKey}</p>;
  if (fromThumbnail) {
    return <img class="item-preview-thumb" src={thumbnail} alt={t.item.previewOf(name)} decoding="async" onError={() => setFailed(thumbnail)} />;
  }
  if (loading || kind === undefined) return <p>{t.item.previewLoading}</p>;
  if (kind === 'none') return <p>{t.item.noPreview}</p>;
  // sandbox="" (no allow-token): no script, no same-origin, no form, no popup, no download.
  return <iframe class={`item-preview item-preview-${kind}`} sandbox="" src={url} title={t.item.previewOf(name)} referrerpolicy="no-referrer" />;
}
