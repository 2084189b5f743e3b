/**
 * A preview of a file from a view URL the store serves inline (Details' view path, an approver's
 * preview of a request): an `<iframe sandbox="">` (no script, an opaque origin, with the store's
 * own sandboxing CSP and nosniff on the bytes: docs/content-security.md), and only for what the
 * store sends inline as an image or plain text (asked with a HEAD: previewKind); anything else
 * gets no frame at all.
 */
import { previewKind } from '../api/item.js';
import { useResource } from '../api/use-resource.js';
import { t } from '../strings/index.js';

export function FilePreview({ url, name }: { url: string | undefined; name: string }) {
  const { data: kind, loading } = useResource(async () => (url ? ((await previewKind(url)) ?? 'none') : 'none'), [url]);
  if (!url) return <p>{t.item.noKey}</p>;
  if (loading || kind === undefined) return <p>{t.item.previewLoading}</p>;
  if (kind === 'none') return <p>{t.item.noPreview}</p>;
  // sandbox="" (no allow-token): no script, no same-origin, no form, no popup, no download.
  return <iframe class={`item-preview item-preview-${kind}`} sandbox="" src={url} title={t.item.previewOf(name)} referrerpolicy="no-referrer" />;
}
