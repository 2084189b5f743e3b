/**
 * The login flows of the Nextcloud and ownCloud clients (bridge/nextcloud/login-flow.ts): a flow a
 * client opened, waiting for the person to grant it in the web app and for the client to collect
 * what was granted. Kept where every instance over the store sees it (store/storage/login-flows.ts:
 * the store's database, or the bridge's own file). The contract only; no state and no I/O here.
 *
 * No token is kept: flows are found by the SHA-256 of their poll token (`pollKey`) or of their
 * login token (`loginKey`). What a grant leaves is sealed (the bridge seals and opens it): a
 * reader of the table learns no password.
 */

export type LoginFlowKind = 'v1' | 'v2';

export interface LoginFlow {
  readonly pollKey: string;
  readonly loginKey: string;
  readonly kind: LoginFlowKind;
  /** The client's name as it gave it (its User-Agent, made fit for an app password's name). */
  readonly client: string;
  /** The client's address: flows are bounded per address. */
  readonly address: string;
  /** The bridge's address as the client reached it: what the client is told to sync with. */
  readonly server: string;
  /** The flow's public key, the app password is sealed to; its private key sealed under the poll token. */
  readonly publicKey: string;
  readonly sealedKey: string;
  readonly createdMs: number;
  readonly expiresMs: number;
}

/** A flow the person granted: what its poll takes, once. */
export interface GrantedLoginFlow {
  readonly flow: LoginFlow;
  readonly loginName: string;
  readonly sealedPassword: string;
}

export interface LoginFlowLimits {
  /** Open flows one address may hold at once. */
  readonly maxPerAddress: number;
  /** Open flows in all. */
  readonly maxOpen: number;
}

/** Where the flows live; methods throw a storage error only (5xx for the request). */
export interface LoginFlowRepository {
  /**
   * Keeps `flow` unless its address holds `maxPerAddress` open flows or all addresses `maxOpen`
   * (then false, nothing kept); flows expired by `nowMs` are dropped first.
   */
  open(flow: LoginFlow, limits: LoginFlowLimits, nowMs: number): Promise<boolean>;
  /** The flow of that login token, open and not granted yet at `nowMs`. */
  find(loginKey: string, nowMs: number): Promise<LoginFlow | undefined>;
  /** Records the grant on an open flow not granted yet; false when there is none (expired, cancelled, granted). */
  grant(loginKey: string, loginName: string, sealedPassword: string, nowMs: number): Promise<boolean>;
  /** Forgets the flow of that login token, granted or not; false when there was none. */
  cancel(loginKey: string): Promise<boolean>;
  /**
   * Takes (removes and returns) the granted flow of that poll token, open at `nowMs`. Of callers
   * racing for one flow, on any instance, one gets it. A flow not granted yet stays.
   */
  take(pollKey: string, nowMs: number): Promise<GrantedLoginFlow | undefined>;
}
