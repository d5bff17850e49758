/**
 * The SIP server's protocol: what a gateway (or the daemon) sends to the sipserver actor, the
 * replies, and the refusal codes. What the sipserver sends back to a gateway is in
 * gateway-messages.ts (the gateway's own union). Senders import only these types.
 *
 * SIP messages cross threads as text (`raw`: the serialized message, latin1 so any body byte
 * survives); the receiver parses it again with protocols/sip `parseMessage`.
 */
import type { Protocol } from '../../runtime/index.js';
import type { RouteCopy } from '../../protocols/gateway/routes.js';

export const SIPSERVER_ID = 'sipserver';

export interface SipHeader {
  name: string;
  value: string;
}

export type SipServerMsg =
  /** A gateway attaches by its tag (SIPSERVER_APP_TAG): requests routed to `tag` go to `gateway` as casts. */
  | { type: 'attach'; tag: string; gateway: string }
  | { type: 'detach'; tag: string }
  /**
   * Answer the server transaction `key` (from a `sip.request` cast). The sipserver adds the To
   * tag of the transaction, a Contact on a 2xx to INVITE when none is given, and retransmits a
   * 2xx to INVITE until its ACK.
   */
  | ({ type: 'respond' } & Answer)
  /**
   * `respond` sent as a cast (the gateway's way, one message a call fewer each way than a
   * request and its reply): nothing comes back. A refusal is logged here, at info when the
   * transaction is gone (cancelled or timed out meanwhile: the gateway was sent `sip.cancelled`
   * for an INVITE), at warn otherwise.
   */
  | ({ type: 'answer' } & Answer)
  /**
   * The local route handler's table (`routeActor` only; a cast, sent on every change and after
   * each attach): new INVITEs one of its routes selects are routed to `tag` here, without a
   * `route.lookup` message; everything else is still asked (not found, fallback, drain).
   */
  | ({ type: 'routeCopy'; from: string } & RouteCopy)
  /**
   * Send a request inside a dialog the sipserver holds (BYE, re-INVITE, INFO...). The final
   * response is the reply; provisional responses are not reported.
   */
  | { type: 'request'; dialog: string; method: string; headers?: SipHeader[]; body?: string; contentType?: string }
  /**
   * A new outbound INVITE to `requestUri` (`sip:user@host:port;transport=tcp`), under the
   * caller's `id` (for `cancel`). The reply is the final response; on a 2xx the server has
   * made the dialog (its key in `dialog`, in-dialog requests of the far end go to `gateway`)
   * and sent the ACK. Provisional responses are cast to `gateway` as `sip.progress`. With
   * `auth`, one 401/407 is answered with digest credentials (same id; the reply is the answer
   * to the authorized INVITE). `callId` chooses the Call-ID (default: a new random one).
   */
  | { type: 'invite'; id: string; requestUri: string; gateway: string; from?: string; to?: string; headers?: SipHeader[]; body?: string; contentType?: string; auth?: { username: string; password: string }; callId?: string }
  /** CANCEL the outbound INVITE `id` (sent once a provisional response is in, §9.1); its reply becomes 487. */
  | { type: 'cancel'; id: string }
  /** Accept new work or not: false makes OPTIONS and new INVITEs answer 503 + Retry-After (drain). */
  | { type: 'acceptingNew'; value: boolean }
  /** Bound ports, attached tags, counts (tests bind port 0 and read the port here). */
  | { type: 'info' };

/** What answers a server transaction (`respond`, `answer`). */
export interface Answer {
  key: string;
  status: number;
  reason?: string;
  headers?: SipHeader[];
  body?: string;
  contentType?: string;
}

export interface SipServerInfo {
  udpPort: number;
  tcpPort: number;
  host: string;
  tags: Record<string, string>;
  acceptingNew: boolean;
  transactions: number;
  dialogs: number;
  connections: number;
}

export interface SipServerReplies {
  attach: { tag: string };
  detach: { tag: string; detached: boolean };
  respond: { sent: true };
  answer: { sent: true };
  routeCopy: { routes: number };
  request: { status: number; reason: string; raw: string };
  invite: { status: number; reason: string; raw: string; dialog?: string };
  cancel: { cancelling: boolean };
  acceptingNew: { acceptingNew: boolean };
  info: SipServerInfo;
}

/**
 * Refusals: TAG_TAKEN (another gateway holds the tag), NO_TRANSACTION (the key is unknown or
 * already answered finally: e.g. the INVITE was cancelled), INVALID (a bad status, header or
 * method), NO_DIALOG (the dialog is gone), TIMEOUT (no final response: Timer B/F).
 */
export type SipServerCode = 'TAG_TAKEN' | 'NO_TRANSACTION' | 'INVALID' | 'NO_DIALOG' | 'TIMEOUT';

export type SipServerProtocol = Protocol<SipServerMsg, SipServerReplies, SipServerCode>;

export interface SipServerArgs {
  host: string;
  /** UDP and TCP port (0: any; `info` tells). */
  port: number;
  /** Address put in Contact and Via (default: host, or 127.0.0.1 when host is a wildcard). */
  advertisedAddress: string;
  routeUrl: string;
  /**
   * The local gateway actor's id when `routeUrl` is its own /sipserver/route (the default):
   * lookups then go to it as a `route.lookup` message, not over HTTP (same answer, same rules).
   * null: every lookup is a GET of `routeUrl`.
   */
  routeActor: string | null;
  routeTimeoutMs: number;
  /** A routed INVITE the gateway has not answered finally this long gets 408. */
  inviteAnswerMs: number;
  /** Retry-After (s) of 503 answers. */
  retryAfter: number;
  maxMessageBytes: number;
  maxConnections: number;
  tcpIdleMs: number;
}
