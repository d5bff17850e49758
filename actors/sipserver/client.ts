/**
 * The SIP server's client side: the requests it sends — inside a dialog (`request`: BYE,
 * re-INVITE, INFO...) and new outbound INVITEs (`invite`, one digest retry, `cancel` per §9.1)
 * — with their client transactions, and what their final responses do: a UAC dialog and its
 * ACK made on a 2xx to an outbound INVITE, the ACK sent again for each retransmission of that
 * 2xx (§13.2.2.4), a BYE's 2xx ending its dialog. Split from core.ts along this seam: the core
 * owns the transaction table, the server side, the dialogs and the one timer, and hands the
 * table's client actions (responses, timeouts) here.
 */
import type { Logger } from 'pino';
import * as sip from '../../protocols/sip/index.js';
import type { KeyedAction, SipResponse } from '../../protocols/sip/index.js';
import { randomBytes } from './random.js';
import type { SipServerEvent, SipSource } from './gateway-messages.js';
import type { SipHeader } from './messages.js';
import { CoreError, checkHeaders, parseContentType } from './gateway-input.js';
import type { ClientTx, DialogEntry } from './records.js';

/** Requests larger than this go over TCP (§18.1.1). */
const UDP_MTU_LIMIT = 1300;

export type RequestMsg = { dialog: string; method: string; headers?: SipHeader[]; body?: string; contentType?: string };
export type InviteMsg = { id: string; requestUri: string; gateway: string; from?: string; to?: string; headers?: SipHeader[]; body?: string; contentType?: string; auth?: { username: string; password: string }; callId?: string };

/** What the client side uses of the core (lazy getters: it is made before the core's arguments are set). */
export interface ClientHost {
  table: sip.TransactionTable;
  dialogs: Map<string, DialogEntry>;
  log(): Logger;
  advertisedAddress(): string;
  now(): number;
  run(actions: KeyedAction[]): void;
  arm(): void;
  sendTo(bytes: Buffer, dest: SipSource): void;
  via(protocol: 'udp' | 'tcp'): sip.Via;
  contact(protocol: 'udp' | 'tcp'): sip.NameAddr;
  cast(gateway: string, event: SipServerEvent): void;
  endDialog(dk: string, reason: 'bye' | 'no-ack'): void;
}

function isCallId(text: string): boolean {
  try {
    sip.parseCallId(text);
    return true;
  } catch {
    return false;
  }
}

export class SipClient {
  private readonly clients = new Map<string, ClientTx>();
  /** Outbound INVITEs by the caller's id → client transaction key. */
  private readonly outbound = new Map<string, string>();
  /** The ACK of each UAC dialog's 2xx, sent again for each 2xx retransmission (§13.2.2.4). */
  private readonly acks = new Map<string, { bytes: Buffer; dest: SipSource }>();

  constructor(private readonly h: ClientHost) {}

  /** Where the client transaction `key` sends (undefined: not ours). */
  destOf(key: string): SipSource | undefined {
    return this.clients.get(key)?.dest;
  }

  /** The transaction `key` ended without a final response (timer, transport error, terminated). */
  failed(key: string, why: string): void {
    const c = this.clients.get(key);
    if (!c) return;
    this.clients.delete(key);
    c.reject(new CoreError('TIMEOUT', `${c.request.method} ${why}`));
  }

  /** A dialog ended: its ACK is not sent again. */
  forget(dk: string): void {
    this.acks.delete(dk);
  }

  /** The server stops: every request still waiting fails. */
  close(): void {
    for (const c of this.clients.values()) c.reject(new CoreError('TIMEOUT', 'SIP server stopping'));
    this.clients.clear();
  }

  request(m: RequestMsg): Promise<SipResponse> {
    const entry = this.h.dialogs.get(m.dialog);
    if (!entry) throw new CoreError('NO_DIALOG', `no dialog ${JSON.stringify(m.dialog)}`);
    if (!/^[A-Z]+$/.test(m.method) || m.method === 'ACK' || m.method === 'CANCEL') throw new CoreError('INVALID', `method ${JSON.stringify(m.method)} cannot be sent in a dialog here`);
    const headers = checkHeaders(m.headers ?? []);
    const contentType = m.contentType !== undefined ? parseContentType(m.contentType) : undefined;
    const body = m.body !== undefined ? Buffer.from(m.body, 'latin1') : undefined;
    const { uri, route } = sip.routeFor(entry.dialog);
    const next = route[0]?.uri ?? uri;
    const size = (body?.length ?? 0) + 600;
    const protocol: 'udp' | 'tcp' = sip.isSipUri(next) && (next.params.transport?.toLowerCase() === 'tcp' || entry.source.protocol === 'tcp' || size > UDP_MTU_LIMIT) ? 'tcp' : 'udp';
    const dest: SipSource = sip.isSipUri(next) ? { protocol, address: next.host, port: next.port ?? 5060 } : entry.source;
    const via = this.h.via(protocol);
    const built = sip.createInDialogRequest(entry.dialog, m.method, { via, contact: [this.h.contact(protocol)], headers, ...(body ? { body } : {}), ...(contentType ? { contentType } : {}) });
    entry.dialog = built.dialog;
    return new Promise<SipResponse>((resolve, reject) => {
      const { key, actions } = this.h.table.request(built.request, protocol === 'tcp', this.h.now());
      this.clients.set(key, { dest, request: built.request, dialog: m.dialog, resolve, reject });
      this.h.run(actions);
      this.h.arm();
    });
  }

  onResponse(key: string, res: SipResponse): void {
    const c = this.clients.get(key);
    if (!c) return this.retransmitted2xx(res);
    if (res.status < 200) {
      if (c.outbound && res.status > 100) this.h.cast(c.outbound.gateway, { type: 'sip.progress', id: c.outbound.id, callId: res.callId, status: res.status, reason: res.reason });
      if (c.outbound && !c.outbound.provisional) {
        c.outbound.provisional = true;
        if (c.outbound.cancelAsked) this.sendCancel(c);
      }
      return;
    }
    this.clients.delete(key);
    if (c.outbound && this.retryWithDigest(c, res)) return;
    if (c.outbound) {
      this.outbound.delete(c.outbound.id);
      if (res.status < 300) {
        const dialog = sip.createUacDialog(c.request, res);
        const dk = sip.dialogKey(dialog.id);
        const ack = sip.serializeMessage(sip.createAckFor2xx(dialog, c.request, this.h.via(c.dest.protocol)));
        this.h.dialogs.set(dk, { dialog, gateway: c.outbound.gateway, source: c.dest });
        this.acks.set(dk, { bytes: ack, dest: c.dest });
        this.h.sendTo(ack, c.dest);
        (res as SipResponse & { dialogKey?: string }).dialogKey = dk;
      }
      return c.resolve(res);
    }
    const entry = c.dialog ? this.h.dialogs.get(c.dialog) : undefined;
    if (entry && c.request.method === 'INVITE') {
      entry.dialog = sip.localInviteDone(entry.dialog);
      if (res.status < 300) this.h.sendTo(sip.serializeMessage(sip.createAckFor2xx(entry.dialog, c.request, this.h.via(c.dest.protocol))), c.dest);
    }
    if (c.request.method === 'BYE' && c.dialog) this.h.endDialog(c.dialog, 'bye');
    c.resolve(res);
  }

  /** A 2xx again after its transaction handed the first up: ACK it again. */
  retransmitted2xx(res: SipResponse): void {
    if (res.status < 200 || res.status >= 300 || res.cseq.method !== 'INVITE') return;
    const dk = sip.responseDialogKey(res);
    const ack = dk ? this.acks.get(dk) : undefined;
    if (ack) this.h.sendTo(ack.bytes, ack.dest);
  }

  invite(m: InviteMsg): Promise<SipResponse & { dialogKey?: string }> {
    if (this.outbound.has(m.id)) throw new CoreError('INVALID', `an INVITE with id ${JSON.stringify(m.id)} is in progress`);
    let uri: sip.Uri;
    let from: sip.NameAddr;
    let to: sip.NameAddr;
    try {
      uri = sip.parseUri(m.requestUri, 'requestUri');
      from = m.from !== undefined ? sip.parseNameAddr(m.from, 'from') : { uri: { scheme: 'sip', user: 'hostd', host: this.h.advertisedAddress(), params: {}, headers: [] }, params: {} };
      to = m.to !== undefined ? sip.parseNameAddr(m.to, 'to') : { uri, params: {} };
    } catch (err) {
      throw new CoreError('INVALID', (err as Error).message);
    }
    if (!sip.isSipUri(uri)) throw new CoreError('INVALID', `requestUri ${JSON.stringify(m.requestUri)} is not a SIP URI`);
    if (m.callId !== undefined && (m.callId.trim() !== m.callId || m.callId.length > 256 || !isCallId(m.callId))) throw new CoreError('INVALID', `callId ${JSON.stringify(m.callId)} is not a Call-ID (word ["@" word], RFC 3261 §25.1)`);
    const headers = checkHeaders(m.headers ?? []);
    const contentType = m.contentType !== undefined ? parseContentType(m.contentType) : undefined;
    const body = m.body !== undefined ? Buffer.from(m.body, 'latin1') : undefined;
    const protocol: 'udp' | 'tcp' = uri.params.transport?.toLowerCase() === 'tcp' || (body?.length ?? 0) + 600 > UDP_MTU_LIMIT ? 'tcp' : 'udp';
    const dest: SipSource = { protocol, address: uri.host.replace(/^\[|\]$/g, ''), port: uri.port ?? 5060 };
    const req = sip.createRequest({
      method: 'INVITE',
      uri,
      from: sip.withTag(from, sip.newTag(randomBytes(8))),
      to,
      callId: m.callId ?? sip.newCallId(randomBytes(12), this.h.advertisedAddress()),
      cseq: 1,
      via: this.h.via(protocol),
      contact: [this.h.contact(protocol)],
      headers,
      ...(body ? { body } : {}),
      ...(contentType ? { contentType } : {}),
    });
    return new Promise((resolve, reject) => {
      const { key, actions } = this.h.table.request(req, protocol === 'tcp', this.h.now());
      this.clients.set(key, { dest, request: req, outbound: { id: m.id, gateway: m.gateway, provisional: false, cancelAsked: false, ...(m.auth ? { auth: m.auth } : {}), authTried: false }, resolve, reject });
      this.outbound.set(m.id, key);
      this.h.run(actions);
      this.h.arm();
    });
  }

  /**
   * A 401/407 to an outbound INVITE that has credentials and has not used them yet: send it
   * again authorized, under the same id (the caller's promise resolves with the new answer).
   * Not when a CANCEL was asked: the call is being abandoned.
   */
  private retryWithDigest(c: ClientTx, res: SipResponse): boolean {
    const o = c.outbound!;
    if ((res.status !== 401 && res.status !== 407) || !o.auth || o.authTried || o.cancelAsked) return false;
    const protocol = c.dest.protocol;
    const req = sip.authorizeRequest(c.request, res, o.auth, { cnonce: randomBytes(8).toString('hex'), branch: sip.newBranch(randomBytes(10)) });
    if (!req) return false;
    o.authTried = true;
    o.provisional = false;
    const { key, actions } = this.h.table.request(req, protocol === 'tcp', this.h.now());
    this.clients.set(key, { ...c, request: req });
    this.outbound.set(o.id, key);
    this.h.log().info({ callId: req.callId, status: res.status }, 'outbound INVITE challenged: retrying with digest credentials');
    this.h.run(actions);
    return true;
  }

  cancel(id: string): boolean {
    const key = this.outbound.get(id);
    const c = key ? this.clients.get(key) : undefined;
    if (!c?.outbound || c.outbound.cancelAsked) return false;
    c.outbound.cancelAsked = true;
    if (c.outbound.provisional) this.sendCancel(c);
    this.h.arm();
    return true;
  }

  /** §9.1: CANCEL in a transaction of its own, same branch as the INVITE; its response matters to nobody. */
  private sendCancel(c: ClientTx): void {
    const cancel = sip.createCancel(c.request);
    const { key, actions } = this.h.table.request(cancel, c.dest.protocol === 'tcp', this.h.now());
    this.clients.set(key, { dest: c.dest, request: cancel, resolve: () => undefined, reject: () => undefined });
    this.h.run(actions);
  }
}
