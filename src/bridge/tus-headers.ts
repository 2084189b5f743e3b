/**
 * What tus 1.0 (tus.io/protocols/resumable-upload) announces of this bridge: the version, the
 * extensions, the largest upload and the checksum algorithms. Below both the OPTIONS verb (which
 * announces them on every drive URL) and the tus door (uploads/tus.ts, which answers with them),
 * so neither imports the other.
 */
export const TUS_VERSION = '1.0.0';
/** The largest upload a POST may announce (1 TiB): a bound, not a promise; the quota decides first. */
export const TUS_MAX_SIZE = 2 ** 40;
const TUS_EXTENSIONS = 'creation,creation-with-upload,termination,checksum,expiration';
export const CHECKSUM_ALGORITHMS = ['sha1', 'md5', 'sha256'] as const;

/** What every tus answer carries; OPTIONS adds what the server supports. */
export const TUS_OPTIONS_HEADERS: Readonly<Record<string, string>> = {
  'Tus-Resumable': TUS_VERSION,
  'Tus-Version': TUS_VERSION,
  'Tus-Extension': TUS_EXTENSIONS,
  'Tus-Max-Size': String(TUS_MAX_SIZE),
  'Tus-Checksum-Algorithm': CHECKSUM_ALGORITHMS.join(','),
};
