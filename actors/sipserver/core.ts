/**
 * The SIP server's core: one transaction table driven by one real timer, the UAS side of
 * INVITE (100 Trying, CANCEL → 200 + 487, 2xx retransmitted until ACK), dialogs, refusals,
 * routing of new out-of-dialog requests (routing.ts) to attached gateways, and in-dialog
 * requests from the network. The requests the server sends (in-dialog, outbound INVITEs, their
 * CANCEL and digest retry) are client.ts's. Sockets are in transport.ts; the actor (actor.ts)
 * wires them.
 *
 * Decisions (docs/gateway.md "SIP server"):
 * - Every server transaction gets its To tag when it is created, so every response of it
 *   (180, 200, 487...) carries the same tag.
 * - Table actions of one step are run sends first, TU deliveries after, so a request refused
 *   at once gets its 100 Trying before its final response.
 * - A 2xx to INVITE is retransmitted by the core itself (§13.3.1.4 schedule of
 *   protocols/sip) to where the INVITE came from; at 64·T1 without ACK the dialog is dropped
 *   the core sends a BYE itself (§13.3.1.4: the session SHOULD be terminated with a BYE) and the
 *   gateway is told `sip.dialogEnded {reason: 'no-ack'}` once that BYE is over.
 * - An outbound INVITE given credentials answers one 401/407 with digest (`authorizeRequest`:
 *   same Call-ID and From tag, CSeq + 1, a new branch); a second challenge is the final answer
 *   (client.ts).
 * - A BYE in a dialog the server holds is answered 200 here and the dialog ends (the gateway
 *   is cast `sip.dialogEnded`, not the BYE). Any other in-dialog request whose gateway has
 *   detached: 481.
 */
import { randomBytes } from './random.js';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import * as sip from '../../protocols/sip/index.js';
import type { KeyedAction, SipRequest, SipResponse } from '../../protocols/sip/index.js';
import type { RequestFields, RouteQuery, SipServerEvent, SipSource } from './gateway-messages.js';
import type { SipHeader, SipServerArgs, SipServerInfo } from './messages.js';
import { dialogsActive, malformedTotal, requestsTotal, responsesTotal, routeLookupSeconds, routeLookups, transactionsActive } from './metrics.js';
import { lookupRoute, routeQuery, type RouteDecision } from './routing.js';
import { CoreError, checkHeaders, oneLine, parseContentType } from './gateway-input.js';
import type { DialogEntry, ServerTx } from './records.js';
import { SipClient, type InviteMsg, type RequestMsg } from './client.js';
import type { Transport } from './transport.js';

export { CoreError } from './gateway-input.js';

/** Methods the server accepts (Allow). */
export const ALLOW = ['INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS', 'INFO', 'UPDATE', 'MESSAGE', 'NOTIFY', 'REFER'];
/** Methods that only make sense inside a dialog: out of one they get 481. */
const DIALOG_ONLY = new Set(['BYE', 'UPDATE', 'INFO', 'NOTIFY']);
/** A non-INVITE the gateway leaves unanswered this long gets 408 (the peer's Timer F is 64·T1). */
const NON_INVITE_ANSWER_MS = 32_000;
/** The one timer wakes at most this often (each due timer still fires at its own deadline). */
const MIN_TICK_MS = 10;

export type Cast = (gateway: string, event: SipServerEvent) => void;

/** What a gateway is sent of a request (gateway-messages.ts): read from the parsed message, no text round trip. */
function requestFields(req: SipRequest): RequestFields {
  return {
    requestUri: sip.formatUri(req.uri),
    uriUser: sip.isSipUri(req.uri) ? (req.uri.user ?? '') : '',
    from: sip.formatNameAddr(req.from),
    to: sip.formatNameAddr(req.to),
    // A copy: the event is handed over to the gateway (casts.ts), the request stays the core's.
    headers: req.headers.map((h) => ({ name: h.name, value: h.value })),
    ...(req.contentType ? { contentType: sip.formatMediaType(req.contentType) } : {}),
    body: req.body.toString('latin1'),
  };
}

export class SipCore {
  readonly table = new sip.TransactionTable();
  private readonly txs = new Map<string, ServerTx>();
  private readonly merges = new Map<string, string>();
  private readonly dialogs = new Map<string, DialogEntry>();
  /**
   * The few entries the timer must look at, so a wake-up never scans every transaction and
   * dialog: server transactions waiting for the gateway's final answer, dialogs whose 2xx is
   * retransmitted until its ACK.
   */
  private readonly awaitingAnswer = new Set<string>();
  private readonly awaitingAck = new Set<string>();
  /** The client side: requests the server sends and their transactions (client.ts). */
  private readonly client = new SipClient({
    table: this.table,
    dialogs: this.dialogs,
    log: () => this.log,
    advertisedAddress: () => this.a.advertisedAddress,
    now: () => this.now(),
    run: (actions) => this.run(actions),
    arm: () => this.arm(),
    sendTo: (bytes, dest) => this.sendTo(bytes, dest),
    via: (protocol) => this.via(protocol),
    contact: (protocol) => this.contact(protocol),
    cast: (gateway, event) => this.cast(gateway, event),
    endDialog: (dk, reason) => this.endDialog(dk, reason),
  });
  readonly tags = new Map<string, string>();
  private readonly serialized = new WeakMap<SipResponse, Buffer>();
  acceptingNew = true;
  transport!: Transport;
  private current: SipSource | undefined;
  private timer: NodeJS.Timeout | null = null;
  private armedFor: number | undefined;
  private lastFire = -Infinity;
  /**
   * How a new out-of-dialog request's route is asked: a GET of `routeUrl` unless the actor
   * sets the local gateway's message path (routing.ts `askRouteActor`).
   */
  lookup: (query: RouteQuery) => Promise<RouteDecision> = (query) => lookupRoute(this.a.routeUrl, query, this.a.routeTimeoutMs);

  constructor(
    private readonly a: SipServerArgs,
    private readonly log: Logger,
    private readonly cast: Cast,
    private readonly setTimer: (fn: () => void, ms: number) => NodeJS.Timeout,
  ) {}

  private now(): number {
    return performance.now();
  }

  private get policy(): sip.ServerPolicy {
    return { allow: ALLOW, supported: [], accept: ['application/sdp'] };
  }

  info(): SipServerInfo {
    return {
      udpPort: this.transport.port,
      tcpPort: this.transport.port,
      host: this.a.host,
      tags: Object.fromEntries(this.tags),
      acceptingNew: this.acceptingNew,
      transactions: this.table.size,
      dialogs: this.dialogs.size,
      connections: this.transport.connections,
    };
  }

  // ---- from the network ----

  onMessage(bytes: Buffer, source: SipSource): void {
    const parsed = sip.parseMessage(bytes, { maxBytes: this.a.maxMessageBytes, stream: source.protocol === 'tcp' });
    if (!parsed.ok) {
      this.malformed(parsed, bytes, source);
      return;
    }
    const msg = parsed.message;
    if (msg.kind === 'request') {
      requestsTotal.inc({ method: msg.method });
      this.markReceived(msg, source);
    }
    this.current = source;
    try {
      const { actions, unmatched } = this.table.receive(msg, source.protocol === 'tcp', this.now());
      this.run(actions);
      if (unmatched?.kind === 'request') this.onAck(unmatched);
      else if (unmatched?.kind === 'response') this.client.retransmitted2xx(unmatched);
    } finally {
      this.current = undefined;
    }
    this.arm();
  }

  /** A TCP stream that cannot be framed: answer 400 (513 when oversize) if the head can be read. */
  onFramingError(bytes: Buffer, source: SipSource, reason: string): void {
    this.refuseUnreadable(bytes, source, reason.includes('exceeds') ? 513 : 400, reason);
  }

  private malformed(p: Extract<sip.ParseResult, { ok: false }>, bytes: Buffer, source: SipSource): void {
    // Over the size limit the parser reads nothing; a datagram is at most 64 KiB, so reading
    // its head for the 513 stays bounded.
    if (p.status === 513 && source.protocol === 'udp') return this.refuseUnreadable(bytes, source, 513, p.reason);
    this.sendRaw(sip.rawErrorResponse(p.partial, p.status, p.reason, sip.newTag(randomBytes(8))), p.status, p.reason, source);
  }

  private refuseUnreadable(bytes: Buffer, source: SipSource, status: number, reason: string): void {
    const again = sip.parseMessage(bytes, { maxBytes: Math.max(bytes.length, 1) });
    const tag = sip.newTag(randomBytes(8));
    if (!again.ok) return this.sendRaw(sip.rawErrorResponse(again.partial, status, reason, tag), status, reason, source);
    const m = again.message;
    const reply = m.kind === 'request' && m.method !== 'ACK' ? sip.serializeMessage(sip.createResponse(m, status, { toTag: tag, reason: oneLine(reason) })) : undefined;
    this.sendRaw(reply, status, reason, source);
  }

  private sendRaw(reply: Buffer | undefined, status: number, reason: string, source: SipSource): void {
    malformedTotal.inc({ transport: source.protocol, outcome: reply ? `answered ${status}` : 'dropped' });
    this.log.info({ source, status, reason, answered: reply !== undefined }, 'malformed SIP message');
    if (!reply) return;
    responsesTotal.inc({ status: String(status) });
    this.sendTo(reply, source);
  }

  /** §18.2.1 received, RFC 3581 rport. */
  private markReceived(req: SipRequest, source: SipSource): void {
    const top = req.via[0];
    if (!top) return;
    if ('rport' in top.params) {
      top.params.rport = String(source.port);
      top.params.received = source.address;
    } else if (top.host !== source.address) {
      top.params.received = source.address;
    }
  }

  // ---- the table's actions ----

  private run(actions: KeyedAction[]): void {
    const tu: KeyedAction[] = [];
    for (const ka of actions) {
      const { key, action } = ka;
      switch (action.type) {
        case 'send':
          this.sendFor(key, action.message);
          break;
        case 'startTimer':
          this.want(this.now() + action.ms);
          break;
        case 'terminated': // after the TU has seen the final response of the same step
        case 'request':
        case 'ack':
        case 'response':
        case 'timeout':
        case 'transportError':
          tu.push(ka);
          break;
        default:
          break;
      }
    }
    for (const { key, action } of tu) {
      if (action.type === 'request') this.onRequest(key, action.request);
      else if (action.type === 'ack') this.onAck(action.request);
      else if (action.type === 'response') this.client.onResponse(key, action.response);
      else if (action.type === 'terminated') this.terminated(key);
      else if (action.type === 'timeout' || action.type === 'transportError') this.client.failed(key, `got no final response (${action.type === 'timeout' ? `timer ${action.timer}` : 'transport error'})`);
    }
  }

  private terminated(key: string): void {
    const tx = this.txs.get(key);
    if (tx) {
      this.txs.delete(key);
      this.awaitingAnswer.delete(key);
      if (tx.mergeKey && this.merges.get(tx.mergeKey) === key) this.merges.delete(tx.mergeKey);
    }
    this.client.failed(key, 'transaction ended without a final response');
  }

  private sendFor(key: string, msg: sip.SipMessage): void {
    if (msg.kind === 'response') {
      const source = this.txs.get(key)?.source ?? this.current;
      if (source) this.sendResponse(msg, source);
    } else {
      const dest = this.client.destOf(key);
      if (dest) this.sendTo(sip.serializeMessage(msg), dest);
    }
  }

  private sendResponse(res: SipResponse, source: SipSource): Buffer {
    const bytes = this.bytesOf(res);
    if (source.protocol === 'tcp') {
      // §18.2.2: the connection the request came on; if it has closed, a new one to received + sent-by port.
      const top = res.via[0];
      const target = this.transport.hasConnection(source.address, source.port) || !top ? { host: source.address, port: source.port } : { host: sip.receivedOf(top) ?? source.address, port: top.port ?? 5060 };
      this.transport.sendTcp(bytes, target.host, target.port);
    } else {
      const top = res.via[0];
      const target = top ? sip.responseTarget(top) : { host: source.address, port: source.port };
      this.transport.sendUdp(bytes, target.host, target.port);
    }
    return bytes;
  }

  /**
   * A response's bytes, serialized once: a transaction sends the same response object again
   * for each retransmission it absorbs, and a 2xx is kept for its own retransmissions.
   */
  private bytesOf(res: SipResponse): Buffer {
    let bytes = this.serialized.get(res);
    if (!bytes) {
      bytes = sip.serializeMessage(res, { own: true }); // kept as long as the response: not a pool slice
      this.serialized.set(res, bytes);
    }
    return bytes;
  }

  private sendTo(bytes: Buffer, dest: SipSource): void {
    if (dest.protocol === 'tcp') this.transport.sendTcp(bytes, dest.address, dest.port);
    else this.transport.sendUdp(bytes, dest.address, dest.port);
  }

  // ---- requests for the TU ----

  private onRequest(key: string, req: SipRequest): void {
    const source = this.current ?? { protocol: 'udp', address: '127.0.0.1', port: 5060 };
    const tx: ServerTx = { request: req, source, toTag: sip.newTag(randomBytes(8)), final: false };
    this.txs.set(key, tx);
    if (req.method === 'CANCEL') return this.onCancel(key, req);
    const dk = sip.requestDialogKey(req);
    if (sip.tagOf(req.to) !== undefined) return this.inDialog(key, tx, req, dk);
    if (req.method === 'OPTIONS') {
      if (!this.acceptingNew) return this.refuse(key, 503, [{ name: 'Retry-After', value: String(this.a.retryAfter) }]);
      const r = sip.checkRequest(req, { ...this.policy, forwarding: false });
      if (r) return this.refuse(key, r.status, r.headers);
      return this.answer(key, sip.answerOptions(req, this.policy, tx.toTag));
    }
    const mk = sip.mergeKey(req);
    const merged = mk !== undefined && this.merges.has(mk) && this.merges.get(mk) !== key;
    if (mk !== undefined && !merged) {
      this.merges.set(mk, key);
      tx.mergeKey = mk;
    }
    const unavailable = !this.acceptingNew && req.method === 'INVITE' ? { retryAfter: this.a.retryAfter } : undefined;
    const refusal = sip.checkRequest(req, { ...this.policy, forwarding: true, merged, ...(unavailable ? { unavailable } : {}) });
    if (refusal) return this.refuse(key, refusal.status, refusal.headers);
    if (DIALOG_ONLY.has(req.method)) return this.refuse(key, 481);
    void this.route(key, tx, req);
  }

  private async route(key: string, tx: ServerTx, req: SipRequest): Promise<void> {
    try {
      await this.routeNow(key, tx, req);
    } catch (err) {
      this.log.error({ err, callId: req.callId }, 'routing failed');
      if (this.txs.get(key) === tx && !tx.final) this.refuse(key, 500);
    }
    this.arm();
  }

  private async routeNow(key: string, tx: ServerTx, req: SipRequest): Promise<void> {
    const started = this.now();
    const decision = await this.lookup(routeQuery(req, tx.source.protocol, tx.source.address));
    routeLookupSeconds.observe((this.now() - started) / 1000);
    routeLookups.inc({ outcome: decision.action === 'error' ? decision.outcome : decision.action });
    if (this.txs.get(key) !== tx || tx.final) return; // cancelled or gone meanwhile
    const retryAfter = [{ name: 'Retry-After', value: String(this.a.retryAfter) }];
    switch (decision.action) {
      case 'error':
        this.log.warn({ callId: req.callId, reason: decision.reason }, 'route lookup failed');
        this.refuse(key, decision.status, decision.status === 503 ? retryAfter : [], decision.reason);
        break;
      case 'reject':
        this.refuse(key, decision.status, [], decision.reason);
        break;
      case 'redirect':
        this.refuse(key, 302, [{ name: 'Contact', value: decision.contact.startsWith('<') ? decision.contact : `<${decision.contact}>` }]);
        break;
      case 'proxy':
        this.refuse(key, 501, [], 'Proxying Not Supported');
        break;
      case 'route': {
        const gateway = this.tags.get(decision.tag);
        if (!gateway) {
          this.refuse(key, 480, [], 'No Application Attached');
          break;
        }
        tx.gateway = gateway;
        tx.answerBy = this.now() + (req.method === 'INVITE' ? this.a.inviteAnswerMs : NON_INVITE_ANSWER_MS);
        this.awaitingAnswer.add(key);
        this.want(tx.answerBy);
        this.cast(gateway, { type: 'sip.request', key, method: req.method, callId: req.callId, source: { ...tx.source }, ...requestFields(req) });
        break;
      }
    }
    this.arm();
  }

  private inDialog(key: string, tx: ServerTx, req: SipRequest, dk: string | undefined): void {
    const entry = dk ? this.dialogs.get(dk) : undefined;
    if (!entry || !dk) return this.answer(key, sip.noDialogResponse(req));
    const r = sip.checkRequest(req, { ...this.policy, forwarding: false });
    if (r) return this.refuse(key, r.status, r.headers);
    const verdict = sip.receiveInDialogRequest(entry.dialog, req, this.a.retryAfter);
    if (!verdict.ok) return this.refuse(key, verdict.status, verdict.headers);
    entry.dialog = verdict.dialog;
    // A BYE in a dialog we hold is answered here (as drachtio-srf answers it for its dialogs):
    // nothing the gateway could say changes it; it hears `sip.dialogEnded {reason: 'bye'}`.
    if (req.method === 'BYE') {
      this.answer(key, sip.createResponse(req, 200));
      this.endDialog(dk, 'bye');
      return;
    }
    if (![...this.tags.values()].includes(entry.gateway)) return this.refuse(key, 481);
    tx.gateway = entry.gateway;
    tx.dialog = dk;
    tx.answerBy = this.now() + (req.method === 'INVITE' ? this.a.inviteAnswerMs : NON_INVITE_ANSWER_MS);
    this.awaitingAnswer.add(key);
    this.want(tx.answerBy);
    this.cast(entry.gateway, { type: 'sip.request', key, method: req.method, callId: req.callId, dialog: dk, source: { ...tx.source }, ...requestFields(req) });
  }

  private onCancel(key: string, cancel: SipRequest): void {
    const target = this.table.cancelTarget(cancel);
    const inviteTx = target ? this.txs.get(target.key) : undefined;
    if (!target || !inviteTx) return this.answer(key, sip.createResponse(cancel, 481));
    this.answer(key, sip.createResponse(cancel, 200, { toTag: inviteTx.toTag }));
    if (target.tx.state !== 'proceeding' || inviteTx.final || !inviteTx.request) return;
    this.answer(target.key, sip.createResponse(inviteTx.request, 487, { toTag: inviteTx.toTag }));
    if (inviteTx.gateway) this.cast(inviteTx.gateway, { type: 'sip.cancelled', key: target.key, callId: cancel.callId, reason: 'cancel' });
  }

  private onAck(ack: SipRequest): void {
    if (ack.method !== 'ACK') return;
    const dk = sip.requestDialogKey(ack);
    const entry = dk ? this.dialogs.get(dk) : undefined;
    if (!entry || !dk) return;
    delete entry.twoXx;
    this.awaitingAck.delete(dk);
    this.cast(entry.gateway, { type: 'sip.ack', dialog: dk, callId: ack.callId });
  }

  private refuse(key: string, status: number, headers: SipHeader[] = [], reason?: string): void {
    const tx = this.txs.get(key);
    if (!tx?.request) return; // gone, or answered finally already
    this.answer(key, sip.createResponse(tx.request, status, { toTag: tx.toTag, headers, ...(reason ? { reason } : {}) }));
  }

  private answer(key: string, res: SipResponse): void {
    const tx = this.txs.get(key);
    if (tx && res.status >= 200) {
      tx.final = true;
      tx.request = undefined; // the transaction lives up to 64·T1 more: nothing reads the request again
      this.awaitingAnswer.delete(key);
    }
    responsesTotal.inc({ status: String(res.status) });
    this.run(this.table.respond(key, res, this.now()));
  }

  // ---- from the gateway ----

  attach(tag: string, gateway: string): void {
    const holder = this.tags.get(tag);
    if (holder !== undefined && holder !== gateway) throw new CoreError('TAG_TAKEN', `tag ${tag} is attached by ${holder}`);
    this.tags.set(tag, gateway);
  }

  detach(tag: string): boolean {
    return this.tags.delete(tag);
  }

  respond(m: { key: string; status: number; reason?: string; headers?: SipHeader[]; body?: string; contentType?: string }): void {
    const tx = this.txs.get(m.key);
    const req = tx?.request;
    if (!tx || !req || tx.final) throw new CoreError('NO_TRANSACTION', `no transaction ${JSON.stringify(m.key)} waiting for an answer (unknown, answered or cancelled)`);
    if (!Number.isInteger(m.status) || m.status < 101 || m.status > 699) throw new CoreError('INVALID', `status must be an integer from 101 to 699, not ${m.status}`);
    const headers = checkHeaders(m.headers ?? []);
    if (m.reason !== undefined && /[\r\n]/.test(m.reason)) throw new CoreError('INVALID', 'reason must be one line');
    const contentType = m.contentType !== undefined ? parseContentType(m.contentType) : undefined;
    const isInvite2xx = req.method === 'INVITE' && m.status >= 200 && m.status < 300;
    const hasContact = headers.some((h) => h.name.toLowerCase() === 'contact' || h.name === 'm');
    const res = sip.createResponse(req, m.status, {
      toTag: tx.toTag,
      headers,
      ...(m.reason !== undefined ? { reason: m.reason } : {}),
      ...(m.body !== undefined ? { body: Buffer.from(m.body, 'latin1') } : {}),
      ...(contentType ? { contentType } : {}),
      ...(isInvite2xx && !hasContact ? { contact: [this.contact(tx.source.protocol)] } : {}),
    });
    if (isInvite2xx && !tx.dialog) {
      const dialog = sip.createUasDialog(req, res);
      const dk = sip.dialogKey(dialog.id);
      this.dialogs.set(dk, { dialog, gateway: tx.gateway ?? '', source: tx.source });
      tx.dialog = dk;
      if (tx.gateway) this.cast(tx.gateway, { type: 'sip.dialog', key: m.key, dialog: dk, callId: req.callId });
    }
    this.answer(m.key, res);
    const entry = tx.dialog ? this.dialogs.get(tx.dialog) : undefined;
    if (entry && req.method === 'INVITE' && m.status >= 200) {
      entry.dialog = sip.remoteInviteDone(entry.dialog);
      if (isInvite2xx) {
        entry.twoXx = { schedule: sip.start2xxRetransmit(this.now()), bytes: this.bytesOf(res), dest: this.twoXxTarget(res, entry.source) };
        this.awaitingAck.add(tx.dialog!);
        this.want(entry.twoXx.schedule.next);
      }
    }
    if (entry && tx.dialog && req.method === 'BYE' && m.status >= 200 && m.status < 300) this.endDialog(tx.dialog, 'bye');
    this.arm();
  }

  /** Send a request inside a dialog (client.ts). */
  request(m: RequestMsg): Promise<SipResponse> {
    return this.client.request(m);
  }

  /** A new outbound INVITE (client.ts). */
  invite(m: InviteMsg): Promise<SipResponse & { dialogKey?: string }> {
    return this.client.invite(m);
  }

  /** CANCEL the outbound INVITE `id` (client.ts). */
  cancel(id: string): boolean {
    return this.client.cancel(id);
  }

  private endDialog(dk: string, reason: 'bye' | 'no-ack'): void {
    const entry = this.dialogs.get(dk);
    if (!entry) return;
    if (entry.noAck) reason = 'no-ack';
    this.dialogs.delete(dk);
    this.awaitingAck.delete(dk);
    this.client.forget(dk);
    if (entry.gateway) this.cast(entry.gateway, { type: 'sip.dialogEnded', dialog: dk, callId: entry.dialog.id.callId, reason });
  }

  private contact(protocol: 'udp' | 'tcp'): sip.NameAddr {
    const params: sip.Params = protocol === 'tcp' ? { transport: 'tcp' } : {};
    return { uri: { scheme: 'sip', host: this.a.advertisedAddress, port: this.transport.port, params, headers: [] }, params: {} };
  }

  private via(protocol: 'udp' | 'tcp'): sip.Via {
    return { protocol: 'SIP/2.0', transport: protocol.toUpperCase(), host: this.a.advertisedAddress, port: this.transport.port, params: { branch: sip.newBranch(randomBytes(10)), rport: null } };
  }

  // ---- the one timer ----

  private nextDeadline(): number | undefined {
    let min = this.table.nextDeadline();
    for (const dk of this.awaitingAck) {
      const e = this.dialogs.get(dk);
      if (e?.twoXx && (min === undefined || e.twoXx.schedule.next < min)) min = e.twoXx.schedule.next;
    }
    for (const key of this.awaitingAnswer) {
      const tx = this.txs.get(key);
      if (tx?.answerBy !== undefined && !tx.final && (min === undefined || tx.answerBy < min)) min = tx.answerBy;
    }
    return min;
  }

  /** Refresh the gauges (called at the end of every entry point). */
  arm(): void {
    transactionsActive.set(this.table.size);
    dialogsActive.set(this.dialogs.size);
  }

  /**
   * A deadline was added: make sure the one real timer goes off by then. Deadlines are learnt
   * from the actions as they are made (no scan of the table per message); a wake-up runs every
   * due timer at its own deadline and re-arms for the next one, at most every MIN_TICK_MS.
   */
  private want(deadline: number): void {
    if (this.timer && this.armedFor !== undefined && this.armedFor <= deadline) return;
    if (this.timer) clearTimeout(this.timer);
    const at = Math.max(deadline, this.lastFire + MIN_TICK_MS);
    this.armedFor = at;
    this.timer = this.setTimer(() => this.fire(), Math.max(0, Math.ceil(at - this.now())));
  }

  private fire(): void {
    this.timer = null;
    this.armedFor = undefined;
    const now = this.now();
    this.lastFire = now;
    this.run(this.table.fire(now));
    for (const key of [...this.awaitingAnswer]) {
      const tx = this.txs.get(key);
      if (!tx?.request || tx.answerBy === undefined || tx.final || tx.answerBy > now) continue;
      const { callId, method } = tx.request;
      this.log.warn({ callId, method }, 'gateway gave no final answer in time: 408');
      this.refuse(key, 408, [], 'No Answer From Application');
      if (tx.gateway && method === 'INVITE' && !tx.dialog) this.cast(tx.gateway, { type: 'sip.cancelled', key, callId, reason: 'timeout' });
    }
    for (const dk of [...this.awaitingAck]) {
      const e = this.dialogs.get(dk);
      if (!e?.twoXx || e.twoXx.schedule.next > now) continue;
      const r = sip.on2xxRetransmitTimer(e.twoXx.schedule);
      if (r.retransmit) {
        e.twoXx.schedule = r.schedule;
        this.sendTo(e.twoXx.bytes, e.twoXx.dest);
      } else {
        this.log.warn({ callId: e.dialog.id.callId }, '2xx never acknowledged: sending BYE');
        e.twoXx = undefined;
        this.awaitingAck.delete(dk);
        e.noAck = true;
        this.request({ dialog: dk, method: 'BYE' }).catch(() => undefined).finally(() => this.endDialog(dk, 'no-ack'));
      }
    }
    const next = this.nextDeadline();
    if (next !== undefined) this.want(next);
    this.arm();
  }

  /** Where a 2xx is retransmitted: over UDP by its top Via (§18.2.2), over TCP on the connection it came from. */
  private twoXxTarget(res: SipResponse, source: SipSource): SipSource {
    if (source.protocol !== 'udp') return source;
    const via = res.via[0];
    const t = via ? sip.responseTarget(via) : { host: source.address, port: source.port };
    return { protocol: 'udp', address: t.host, port: t.port };
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.client.close();
  }
}
