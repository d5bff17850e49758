/**
 * Dialogs (RFC 3261 §12, §13, §14, §15): creation on the UAS and UAC sides, in-dialog request
 * construction with loose and strict routing, remote CSeq ordering, re-INVITE glare, the ACK
 * for a 2xx, and the UAS core's 2xx retransmission schedule.
 *
 * Decisions:
 * - A dialog is plain data; every function returns a new one. The id is Call-ID + local tag +
 *   remote tag (§12), `dialogKey` its string form, and `requestDialogKey`/`responseDialogKey`
 *   compute the key an incoming message would have, for the caller's map. A request with a
 *   To tag that matches no dialog gets 481 (`noDialogResponse`, §12.2.2).
 * - Remote CSeq: a request lower than the remote sequence number is 500 (§12.2.2); ACK and
 *   CANCEL carry the INVITE's number and are not checked.
 * - Glare (§14.2): a re-INVITE received while our own is pending is 491; one received while the
 *   remote's previous INVITE is still unanswered is 500 with Retry-After (0-10 s, here the
 *   caller's value).
 * - Target refresh: a re-INVITE or UPDATE with a Contact replaces the remote target (§12.2.2).
 * - The 2xx retransmission schedule (§13.3.1.4) is data too: T1, doubling to T2, given up at
 *   64·T1 (the caller then sends BYE).
 */
import { tagOf, withTag } from './address.js';
import { createResponse } from './build.js';
import type { TimerConfig } from './timers.js';
import { DEFAULT_TIMERS } from './timers.js';
import type { Header, MediaType, NameAddr, SipRequest, SipResponse, SipUri, Uri, Via } from './types.js';
import { isLooseRouter } from './uri.js';

export interface DialogId {
  callId: string;
  localTag: string;
  remoteTag: string;
}

export interface Dialog {
  id: DialogId;
  role: 'uac' | 'uas';
  state: 'early' | 'confirmed';
  /** Our address with our tag (From of our requests). */
  local: NameAddr;
  /** Their address with their tag (To of our requests). */
  remote: NameAddr;
  /** Last CSeq number we used; undefined while empty. */
  localSeq?: number;
  /** Last CSeq number they used; undefined while empty. */
  remoteSeq?: number;
  remoteTarget: Uri;
  routeSet: NameAddr[];
  secure: boolean;
  /** Our re-INVITE waits for its final response (glare, §14.2). */
  localInvitePending?: boolean;
  /** Their INVITE waits for our final response (§14.2). */
  remoteInvitePending?: boolean;
}

export function dialogKey(id: DialogId): string {
  return `${id.callId}\n${id.localTag}\n${id.remoteTag}`;
}

/** The key of the dialog a received request belongs to (we are the To side), if it has both tags. */
export function requestDialogKey(req: SipRequest): string | undefined {
  const local = tagOf(req.to);
  const remote = tagOf(req.from);
  return local !== undefined && remote !== undefined ? dialogKey({ callId: req.callId, localTag: local, remoteTag: remote }) : undefined;
}

/** The key of the dialog a received response belongs to (we are the From side). */
export function responseDialogKey(res: SipResponse): string | undefined {
  const local = tagOf(res.from);
  const remote = tagOf(res.to);
  return local !== undefined && remote !== undefined ? dialogKey({ callId: res.callId, localTag: local, remoteTag: remote }) : undefined;
}

function firstContactUri(m: SipRequest | SipResponse): Uri | undefined {
  return m.contact[0]?.uri;
}

function isSecure(req: SipRequest): boolean {
  return req.uri.scheme === 'sips' && req.via[0]?.transport === 'TLS';
}

/** UAS side (§12.1.1): from the INVITE and our 1xx (with To tag) or 2xx. */
export function createUasDialog(invite: SipRequest, response: SipResponse): Dialog {
  const localTag = tagOf(response.to);
  const remoteTag = tagOf(invite.from) ?? '';
  if (localTag === undefined) throw new Error('a dialog-creating response needs a To tag');
  return {
    id: { callId: invite.callId, localTag, remoteTag },
    role: 'uas',
    state: response.status < 200 ? 'early' : 'confirmed',
    local: response.to,
    remote: invite.from,
    remoteSeq: invite.cseq.seq,
    remoteTarget: firstContactUri(invite) ?? invite.from.uri,
    routeSet: invite.recordRoute,
    secure: isSecure(invite),
  };
}

/** UAC side (§12.1.2): from our INVITE and the 1xx/2xx received (route set reversed). */
export function createUacDialog(invite: SipRequest, response: SipResponse): Dialog {
  const remoteTag = tagOf(response.to);
  const localTag = tagOf(invite.from);
  if (remoteTag === undefined || localTag === undefined) throw new Error('a dialog needs both tags');
  return {
    id: { callId: invite.callId, localTag, remoteTag },
    role: 'uac',
    state: response.status < 200 ? 'early' : 'confirmed',
    local: invite.from,
    remote: response.to,
    localSeq: invite.cseq.seq,
    remoteTarget: firstContactUri(response) ?? response.to.uri,
    routeSet: [...response.recordRoute].reverse(),
    secure: isSecure(invite),
  };
}

/** An early dialog confirmed by the 2xx (§12.3 / §13.2.2.4): route set and target from it. */
export function confirmUacDialog(d: Dialog, response: SipResponse): Dialog {
  return { ...d, state: 'confirmed', remoteTarget: firstContactUri(response) ?? d.remoteTarget, routeSet: [...response.recordRoute].reverse() };
}

export interface InDialogOptions {
  via: Via;
  contact?: NameAddr[];
  headers?: Header[];
  body?: Buffer;
  contentType?: MediaType;
  /** For ACK and CANCEL: the CSeq number of the INVITE. */
  cseq?: number;
}

/** Request-URI and Route of an in-dialog request (§12.2.1.1, loose or strict first hop). */
export function routeFor(d: Dialog): { uri: Uri; route: NameAddr[] } {
  const first = d.routeSet[0];
  if (!first) return { uri: d.remoteTarget, route: [] };
  if (isLooseRouter(first.uri)) return { uri: d.remoteTarget, route: d.routeSet };
  const stripped: Uri = 'host' in first.uri ? ({ ...first.uri, params: stripForRequestUri(first.uri), headers: [] } satisfies SipUri) : first.uri;
  return { uri: stripped, route: [...d.routeSet.slice(1), { uri: d.remoteTarget, params: {} }] };
}

/** The first route's parameters minus those a Request-URI may not carry (§19.1.1 table: `method`; headers are dropped too). */
function stripForRequestUri(u: SipUri): SipUri['params'] {
  const { method: _m, ...rest } = u.params;
  return rest;
}

/** A request within the dialog (§12.2.1.1): returns the updated dialog (local CSeq, glare flag) and the request. */
export function createInDialogRequest(d: Dialog, method: string, o: InDialogOptions): { dialog: Dialog; request: SipRequest } {
  const keepSeq = method === 'ACK' || method === 'CANCEL';
  const seq = keepSeq ? (o.cseq ?? d.localSeq ?? 1) : (d.localSeq ?? 0) + 1;
  const { uri, route } = routeFor(d);
  const request: SipRequest = {
    kind: 'request',
    method,
    uri,
    via: [o.via],
    maxForwards: 70,
    from: d.local,
    to: d.remote,
    callId: d.id.callId,
    cseq: { seq, method },
    contact: o.contact ?? [],
    route,
    recordRoute: [],
    headers: o.headers ?? [],
    body: o.body ?? Buffer.alloc(0),
  };
  if (o.contentType) request.contentType = o.contentType;
  const dialog: Dialog = { ...d, localSeq: keepSeq ? d.localSeq : seq };
  if (method === 'INVITE') dialog.localInvitePending = true;
  return { dialog, request };
}

/** The ACK for a 2xx (§13.2.2.4): its own request and transaction, CSeq number of the INVITE. */
export function createAckFor2xx(d: Dialog, invite: SipRequest, via: Via, sdp?: { body: Buffer; contentType: MediaType }): SipRequest {
  return createInDialogRequest(d, 'ACK', { via, cseq: invite.cseq.seq, ...(sdp ?? {}) }).request;
}

/** Our re-INVITE got its final response: glare window closed. */
export function localInviteDone(d: Dialog): Dialog {
  return { ...d, localInvitePending: false };
}

/** Their INVITE got our final response. */
export function remoteInviteDone(d: Dialog): Dialog {
  return { ...d, remoteInvitePending: false };
}

export type InDialogVerdict = { ok: true; dialog: Dialog } | { ok: false; status: 500 | 491; headers: Header[]; dialog: Dialog };

/**
 * A request received within the dialog (§12.2.2, §14.2): CSeq order, glare, target refresh.
 * `retryAfter` is the Retry-After (seconds) for the 500 of an overlapping INVITE.
 */
export function receiveInDialogRequest(d: Dialog, req: SipRequest, retryAfter = 5): InDialogVerdict {
  if (req.method === 'ACK' || req.method === 'CANCEL') return { ok: true, dialog: d };
  if (d.remoteSeq !== undefined && req.cseq.seq < d.remoteSeq) return { ok: false, status: 500, headers: [], dialog: d };
  if (req.method === 'INVITE') {
    if (d.localInvitePending) return { ok: false, status: 491, headers: [], dialog: d };
    if (d.remoteInvitePending) return { ok: false, status: 500, headers: [{ name: 'Retry-After', value: String(retryAfter) }], dialog: d };
  }
  const next: Dialog = { ...d, remoteSeq: req.cseq.seq };
  if (req.method === 'INVITE') next.remoteInvitePending = true;
  const target = firstContactUri(req);
  if ((req.method === 'INVITE' || req.method === 'UPDATE') && target) next.remoteTarget = target;
  return { ok: true, dialog: next };
}

/** 481 for a request with a To tag that matches no dialog (§12.2.2). */
export function noDialogResponse(req: SipRequest): SipResponse {
  return createResponse(req, 481);
}

/**
 * CANCEL of a pending INVITE (§9.2): 200 to the CANCEL (To tag as in the INVITE's responses)
 * and 487 to the INVITE. A CANCEL matching no INVITE transaction gets 481.
 */
export function cancelResponses(invite: SipRequest, cancel: SipRequest, toTag: string): { cancel: SipResponse; invite: SipResponse } {
  return { cancel: createResponse(cancel, 200, { toTag }), invite: createResponse(invite, 487, { toTag }) };
}

/** The glare back-off of §14.1, in ms: 2.1-4 s if we own the Call-ID, 0-2 s otherwise; `random` in [0, 1). */
export function glareRetryDelay(ownsCallId: boolean, random: number): number {
  const steps = ownsCallId ? 190 : 200;
  const base = ownsCallId ? 2100 : 0;
  return base + Math.floor(random * (steps + 1)) * 10;
}

export interface TwoXxSchedule {
  /** When the next retransmission is due. */
  next: number;
  interval: number;
  /** 64·T1 after the first send: give up (the caller sends BYE). */
  giveUpAt: number;
}

/** The UAS core's 2xx retransmission (§13.3.1.4), started when the 2xx is first sent at `now`. */
export function start2xxRetransmit(now: number, c: TimerConfig = DEFAULT_TIMERS): TwoXxSchedule {
  return { next: now + c.t1, interval: c.t1, giveUpAt: now + 64 * c.t1 };
}

/** The schedule's timer went off: retransmit and continue, or give up. */
export function on2xxRetransmitTimer(s: TwoXxSchedule, c: TimerConfig = DEFAULT_TIMERS): { retransmit: true; schedule: TwoXxSchedule } | { retransmit: false; giveUp: true } {
  if (s.next >= s.giveUpAt) return { retransmit: false, giveUp: true };
  const interval = Math.min(2 * s.interval, c.t2);
  return { retransmit: true, schedule: { ...s, interval, next: Math.min(s.next + interval, s.giveUpAt) } };
}

