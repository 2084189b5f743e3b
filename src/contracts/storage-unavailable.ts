/**
 * The failure every repository of these contracts may throw whatever it keeps: its database could
 * not be reached or answered with an engine failure. The store answers it 503 (store/envelope.ts),
 * the bridge 503 with Retry-After (bridge/dav-errors.ts); both are worth retrying later.
 */
export class StorageUnavailableError extends Error {
  override name = 'StorageUnavailableError';
}
