/**
 * What the SIP server casts to an attached gateway actor (the gateway's message union imports
 * this). A request travels as the fields a gateway reads (`RequestFields`), taken from the
 * message the SIP server parsed — once: the gateway does not parse SIP again (it was sent the
 * whole text and re-parsed it before; measured in docs/gateway.md "Calls per second"). An ACK
 * carries only its dialog. Answers go the other way as `respond` / `request`
 * (actors/sipserver/messages.ts).
 *
 * Also the route lookup by message (`route.lookup`): when the route handler is this daemon's
 * own gateway, the SIP server asks the gateway actor instead of GETting its /sipserver/route
 * (routing.ts `askRouteActor`): the same query fields, the same answer text.
 */
export interface SipSource {
  protocol: 'udp' | 'tcp';
  address: string;
  port: number;
}

/** A request as a gateway reads it: header values as the SIP server would write them. */
export interface RequestFields {
  /** The Request-URI as written on the start line. */
  requestUri: string;
  /** The Request-URI's user part, decoded ('' when it has none or is not a SIP URI). */
  uriUser: string;
  from: string;
  to: string;
  /**
   * Every header other than the ones the SIP layer owns (Via, From, To, Call-ID, CSeq,
   * Max-Forwards, Contact, Route, Record-Route, Content-Type, Content-Length), in arrival
   * order, known ones by their long-form names.
   */
  headers: Array<{ name: string; value: string }>;
  /** `type/subtype[;params]` when the request has a Content-Type. */
  contentType?: string;
  /** The body, byte for byte as latin1 text ('' when none). */
  body: string;
}

export type SipServerEvent =
  /**
   * A request for this gateway: a new out-of-dialog request routed to its tag (`dialog`
   * undefined), or a request other than BYE inside one of its dialogs (`dialog` set: the
   * server answers a BYE itself and casts `sip.dialogEnded`). Answer with `respond {key, ...}`
   * (or `answer`, its cast). INVITE retransmissions are absorbed: each INVITE comes once.
   */
  | ({ type: 'sip.request'; key: string; method: string; callId: string; dialog?: string; source: SipSource } & RequestFields)
  /** The ACK of our 2xx arrived: the dialog is confirmed. */
  | { type: 'sip.ack'; dialog: string; callId: string }
  /**
   * The INVITE `key` is over without the gateway's answer: `cancel` (its sender cancelled it:
   * 200 to the CANCEL, 487 to the INVITE) or `timeout` (no final answer within
   * SIPSERVER_INVITE_ANSWER_MS: 408).
   */
  | { type: 'sip.cancelled'; key: string; callId: string; reason: 'cancel' | 'timeout' }
  /** A dialog created by our 2xx (`respond` to INVITE); `dialog` is its key in later messages. */
  | { type: 'sip.dialog'; key: string; dialog: string; callId: string }
  /** A provisional response (101-199) to the outbound INVITE `id` (from an `invite` message). */
  | { type: 'sip.progress'; id: string; callId: string; status: number; reason: string }
  /** A dialog ended: BYE answered 2xx (either way), or our 2xx was never ACKed (64·T1: the server sent a BYE). */
  | { type: 'sip.dialogEnded'; dialog: string; callId: string; reason: 'bye' | 'no-ack' };

export type SipServerEventType = SipServerEvent['type'];

/**
 * Several events for one gateway from one turn of the SIP server's event loop, in order: one
 * message between the threads instead of several when the server is busy (casts.ts). A single
 * event goes as itself.
 */
export interface SipServerEvents {
  type: 'sip.events';
  events: SipServerEvent[];
}

/** What a gateway must accept from the SIP server. */
export type SipServerCast = SipServerEvent | SipServerEvents;

/** drachtio's route query fields (`method, domain, protocol, source_address, fromUser, ...`). */
export type RouteQuery = Record<string, string>;

/**
 * The route lookup as a message to the gateway actor: the query fields in, the route
 * handler's answer out as the very text GET /sipserver/route would have answered (`{action,
 * data}`, or a fallback handler's answer passed through), read by routing.ts `parseRouteAnswer`.
 */
export interface RouteLookup {
  type: 'route.lookup';
  query: RouteQuery;
}

export interface RouteLookupReplies {
  'route.lookup': { answer: string };
}
