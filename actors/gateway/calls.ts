/**
 * The gateway's SIP calls: who owns each (a control connection), its state, and the SIP side
 * of it through the SIP server actor — inbound INVITEs offered to their owner as `sip.invite`,
 * the owner's answer turned into the SIP answer (or 504/480/502), re-INVITE and BYE both
 * ways, CANCEL, outbound INVITEs with their CANCEL and digest credentials, and the teardown of
 * everything a connection owned when it closes. Knows nothing of WebSockets: it talks to
 * owners through `Owners`.
 *
 * Decisions (docs/gateway.md "Decisions"):
 * - An INVITE whose route owner is gone by the time it arrives gets 480; an owner that
 *   disconnects before answering, 480 too; an answer that is not a valid answer (or an error
 *   answer), 502; no answer within `answerTimeoutMs`, 504.
 * - A late answer (after a CANCEL, the timeout or 408) is dropped.
 * - A Call-ID already held by the gateway (a second INVITE of a call, not a retransmission: the
 *   SIP server absorbs those) gets 482 Loop Detected.
 * - In-dialog requests other than BYE and re-INVITE: INFO and NOTIFY answered 200 (and passed to
 *   the owner as `sip.info`), others 501.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { ActorError, refusalOf, type ActorRef } from '../../runtime/index.js';
import { parseMessage, type SipMessage } from '../../protocols/sip/index.js';
import { checkCallAnswer, type GatewayParams } from '../../protocols/gateway/commands.js';
import type { GatewayErrorCode } from '../../protocols/gateway/envelope.js';
import type { RouteTable } from '../../protocols/gateway/routes.js';
import type { SipServerEvent } from '../sipserver/gateway-messages.js';
import type { SipHeader, SipServerProtocol } from '../sipserver/messages.js';
import { callsActive, callsTotal, setupSeconds } from './metrics.js';

type SipRequestEvent = Extract<SipServerEvent, { type: 'sip.request' }>;

/** A refusal of a control command: becomes `{id, error: {code, message}}`. */
export class CommandError extends Error {
  constructor(readonly code: GatewayErrorCode, message: string) {
    super(message);
  }
}

/** Why an ask to an owner failed without an answer. */
export class AskError extends Error {
  constructor(readonly reason: 'timeout' | 'gone' | 'error', message: string) {
    super(message);
  }
}

/** What calls need of the control connections. */
export interface Owners {
  /** Send the owner a request and wait for its `result` (AskError on timeout, disconnect or error answer). */
  ask(owner: string, method: string, params: Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown>>;
  emit(owner: string, event: string, data: Record<string, unknown>): void;
  alive(owner: string): boolean;
}

type State = 'offered' | 'calling' | 'up' | 'ended';

interface Call {
  callId: string;
  direction: 'inbound' | 'outbound';
  owner: string;
  state: State;
  startedAt: number;
  /** Inbound: the INVITE's server transaction. */
  key?: string;
  dialog?: string;
  /** Who sent the BYE, once one is sent or received. */
  byeBy?: 'local' | 'remote';
}

/** Deadline of an in-dialog request or outbound INVITE (above the SIP timers B/F of 32 s). */
const SIP_REQUEST_TIMEOUT_MS = 40_000;
/** An outbound INVITE may be challenged once: two INVITE transactions. */
const OUTBOUND_TIMEOUT_MS = 2 * SIP_REQUEST_TIMEOUT_MS;
const SDP = 'application/sdp';

export interface CallsOptions {
  server: ActorRef<SipServerProtocol>;
  /** This gateway's actor id (the SIP server sends a dialog's requests there). */
  self: string;
  routes: RouteTable;
  owners: Owners;
  log: Logger;
  answerTimeoutMs: number;
  /** Whether new calls are taken (the drain of part 2 flips it). */
  accepting: () => boolean;
}

export class Calls {
  private readonly calls = new Map<string, Call>();
  private readonly byDialog = new Map<string, Call>();
  private readonly byOwner = new Map<string, Set<Call>>();

  constructor(private readonly o: CallsOptions) {}

  get size(): number {
    return this.calls.size;
  }

  /** The owner of a call, if the gateway holds it. */
  ownerOf(callId: string): { owner: string; state: string } | undefined {
    const c = this.calls.get(callId);
    return c && { owner: c.owner, state: c.state };
  }

  has(callId: string): boolean {
    return this.calls.has(callId);
  }

  /** Calls by stage, for the drain: offered (a reserved inbound call), being set up or up. */
  counts(): { offered: number; other: number } {
    let offered = 0;
    for (const c of this.calls.values()) if (c.state === 'offered') offered++;
    return { offered, other: this.calls.size - offered };
  }

  countOf(owner: string): number {
    return this.byOwner.get(owner)?.size ?? 0;
  }

  list(owner: string): Array<{ callId: string; direction: string; state: string }> {
    return [...(this.byOwner.get(owner) ?? [])].map((c) => ({ callId: c.callId, direction: c.direction, state: c.state }));
  }

  // ---- from the SIP server ----

  onEvent(ev: SipServerEvent): void {
    switch (ev.type) {
      case 'sip.request':
        if (ev.dialog) this.inDialog(ev, ev.dialog);
        else this.offer(ev);
        return;
      case 'sip.dialog': {
        const call = this.calls.get(ev.callId);
        if (call && call.key === ev.key) {
          call.dialog = ev.dialog;
          this.byDialog.set(ev.dialog, call);
        }
        return;
      }
      case 'sip.ack': {
        const call = this.byDialog.get(ev.dialog);
        if (call) this.o.owners.emit(call.owner, 'sip.confirmed', { callId: call.callId });
        return;
      }
      case 'sip.cancelled': {
        const call = this.calls.get(ev.callId);
        // 'up' without a dialog: the application's answer crossed the CANCEL (or the 408), and
        // the SIP server dropped the 200 (a 2xx would have made the dialog, and no cancel after it)
        if (!call || call.key !== ev.key || !(call.state === 'offered' || (call.state === 'up' && call.dialog === undefined))) return;
        this.o.log.info({ callId: ev.callId, reason: ev.reason }, 'inbound call cancelled before the answer');
        this.end(call, call.state === 'up' ? null : ev.reason === 'cancel' ? 'cancelled' : 'timeout'); // an answered one is counted already
        this.o.owners.emit(call.owner, 'sip.cancelled', { callId: call.callId, reason: ev.reason });
        return;
      }
      case 'sip.progress': {
        const call = this.calls.get(ev.id);
        // The INVITE's final answer (a reply) may overtake this cast: report it while the call lives.
        if (call && call.direction === 'outbound') this.o.owners.emit(call.owner, 'sip.progress', { callId: call.callId, status: ev.status, reason: ev.reason });
        return;
      }
      case 'sip.dialogEnded': {
        const call = this.byDialog.get(ev.dialog);
        if (!call) return;
        const by = ev.reason === 'no-ack' ? 'local' : call.byeBy ?? 'remote';
        this.o.log.info({ callId: call.callId, reason: ev.reason, by }, 'call ended');
        this.end(call, null);
        this.o.owners.emit(call.owner, 'sip.ended', { callId: call.callId, reason: ev.reason, by });
        return;
      }
    }
  }

  /** A new INVITE routed to our tag: offer it to the route's owner. */
  private offer(req: SipRequestEvent): void {
    const { key, callId } = req;
    if (req.method !== 'INVITE') return this.respond(key, 501, 'Not Implemented Here');
    const user = req.uriUser;
    const hit = this.o.routes.lookup(user);
    if (!this.o.accepting()) return this.respond(key, 503, 'Service Unavailable', [{ name: 'Retry-After', value: '1' }]);
    if (!hit || !this.o.owners.alive(hit.owner)) {
      callsTotal.inc({ direction: 'inbound', outcome: 'no-owner' });
      this.o.log.info({ callId, user }, 'INVITE for a route no connection holds any more: 480');
      return this.respond(key, 480, 'Temporarily Unavailable');
    }
    if (this.calls.has(callId)) return this.respond(key, 482, 'Loop Detected');
    const call: Call = { callId, direction: 'inbound', owner: hit.owner, state: 'offered', startedAt: performance.now(), key };
    this.add(call);
    this.o.log.info({ callId, user, owner: hit.owner }, 'inbound call offered');
    const params = { callId, from: req.from, to: req.to, requestUri: req.requestUri, headers: otherHeaders(req), sdp: text(req.body) };
    this.o.owners.ask(call.owner, 'sip.invite', params, this.o.answerTimeoutMs).then(
      (result) => this.answered(call, result),
      (err: unknown) => this.notAnswered(call, err),
    );
  }

  private answered(call: Call, result: Record<string, unknown>): void {
    if (call.state !== 'offered') return; // cancelled (or timed out at the SIP server) meanwhile
    const checked = checkCallAnswer(result);
    if (!checked.ok) {
      this.o.log.warn({ ns: 'control', callId: call.callId, error: checked.error }, 'invalid sip.invite answer: 502');
      this.o.owners.emit(call.owner, 'sip.error', { callId: call.callId, message: `your sip.invite answer was refused: ${checked.error}` });
      return this.finishOffer(call, 502, 'Bad Gateway', 'failed');
    }
    const a = checked.answer;
    if (a.action === 'reject') return this.finishOffer(call, a.status, a.reason, 'rejected');
    call.state = 'up';
    setupSeconds.observe({ direction: 'inbound' }, (performance.now() - call.startedAt) / 1000);
    callsTotal.inc({ direction: 'inbound', outcome: 'answered' });
    // A cast: should the INVITE be cancelled (or time out) meanwhile, the SIP server drops the
    // 200 and the `sip.cancelled` it sent ends the call (onEvent).
    this.o.server.send({ type: 'answer', key: call.key!, status: 200, body: a.sdp, contentType: SDP }, { handover: true });
  }

  private notAnswered(call: Call, err: unknown): void {
    if (call.state !== 'offered') return;
    const reason = err instanceof AskError ? err.reason : 'error';
    if (reason === 'timeout') return this.finishOffer(call, 504, 'Server Time-out', 'timeout');
    if (reason === 'gone') return this.finishOffer(call, 480, 'Temporarily Unavailable', 'no-owner');
    return this.finishOffer(call, 502, 'Bad Gateway', 'failed');
  }

  /** Answer an offered INVITE finally without a dialog, and forget the call. */
  private finishOffer(call: Call, status: number, reason: string | undefined, outcome: string): void {
    this.o.log.info({ callId: call.callId, status }, 'inbound call not answered');
    setupSeconds.observe({ direction: 'inbound' }, (performance.now() - call.startedAt) / 1000);
    this.end(call, outcome);
    this.respond(call.key!, status, reason);
  }

  private inDialog(req: SipRequestEvent, dialog: string): void {
    const { key, method } = req;
    const call = this.byDialog.get(dialog);
    if (!call || call.state === 'ended') return this.respond(key, 481);
    // (a BYE never comes here: the SIP server answers it and casts sip.dialogEnded)
    if (method === 'INVITE') {
      this.o.owners.ask(call.owner, 'sip.reinvite', { callId: call.callId, sdp: text(req.body), headers: otherHeaders(req) }, this.o.answerTimeoutMs).then(
        (result) => {
          const checked = checkCallAnswer(result);
          if (!checked.ok) return this.respond(key, 500, 'Invalid Application Answer');
          const a = checked.answer;
          if (a.action === 'reject') return this.respond(key, a.status, a.reason);
          this.respond(key, 200, undefined, [], a.sdp);
        },
        (err: unknown) => this.respond(key, err instanceof AskError && err.reason === 'timeout' ? 504 : 500),
      );
      return;
    }
    if (method === 'INFO' || method === 'NOTIFY') {
      this.o.owners.emit(call.owner, 'sip.info', { callId: call.callId, method, contentType: req.contentType, body: text(req.body) });
      return this.respond(key, 200);
    }
    this.respond(key, 501);
  }

  /** Answer a server transaction: a cast (the SIP server logs a refusal; a gone transaction is no error). */
  private respond(key: string, status: number, reason?: string, headers: SipHeader[] = [], sdp?: string): void {
    const body = sdp !== undefined ? { body: sdp, contentType: SDP } : {};
    this.o.server.send({ type: 'answer', key, status, ...(reason ? { reason } : {}), ...(headers.length ? { headers } : {}), ...body }, { handover: true });
  }

  // ---- control commands ----

  async createOutbound(owner: string, p: GatewayParams<'sip.createOutbound'>): Promise<Record<string, unknown>> {
    if (!this.o.accepting()) throw new CommandError('SHUTTING_DOWN', 'the gateway takes no new calls (draining)');
    const callId = p.callId ?? `${randomUUID()}@hostd`;
    if (this.calls.has(callId)) throw new CommandError('INVALID_PARAMS', `callId ${callId} is already in use`);
    const call: Call = { callId, direction: 'outbound', owner, state: 'calling', startedAt: performance.now() };
    this.add(call);
    this.o.log.info({ callId, owner }, 'outbound call');
    const headers = Object.entries(p.headers ?? {}).map(([name, value]) => ({ name, value }));
    let reply;
    try {
      reply = await this.o.server.request(
        { type: 'invite', id: callId, callId, requestUri: p.requestUri, gateway: this.o.self, body: p.sdp, contentType: SDP, ...(headers.length ? { headers } : {}), ...(p.from ? { from: p.from } : {}), ...(p.auth ? { auth: p.auth } : {}) },
        { timeoutMs: OUTBOUND_TIMEOUT_MS },
      );
    } catch (err) {
      this.end(call, 'failed');
      const code = refusalOf<SipServerProtocol>(err);
      if (code === 'INVALID') throw new CommandError('INVALID_PARAMS', (err as Error).message);
      throw new CommandError('SIP_ERROR', `the INVITE failed: ${err instanceof ActorError ? err.message : String(err)}`);
    }
    setupSeconds.observe({ direction: 'outbound' }, (performance.now() - call.startedAt) / 1000);
    if (reply.status >= 300 || !reply.dialog) {
      this.end(call, reply.status === 487 ? 'cancelled' : 'rejected');
      throw new CommandError('SIP_ERROR', `the far end answered ${reply.status} ${reply.reason}`);
    }
    call.dialog = reply.dialog;
    this.byDialog.set(reply.dialog, call);
    call.state = 'up';
    callsTotal.inc({ direction: 'outbound', outcome: 'answered' });
    if (!this.o.owners.alive(owner)) {
      // The owner left while the INVITE was out: the call it asked for is torn down at once.
      void this.hangUp(call).catch(() => undefined);
      throw new CommandError('CALL_STATE', 'the owner closed');
    }
    const res = parse(reply.raw);
    return { callId, status: reply.status, sdp: res ? res.body.toString('utf8') : '' };
  }

  async cancelOutbound(owner: string, callId: string): Promise<Record<string, unknown>> {
    const call = this.owned(owner, callId);
    if (call.direction !== 'outbound' || call.state !== 'calling') throw new CommandError('CALL_STATE', `call ${callId} is not an outbound call being set up (it is ${call.direction}, ${call.state})`);
    const r = await this.o.server.request({ type: 'cancel', id: callId });
    return { callId, cancelling: r.cancelling };
  }

  async bye(owner: string, callId: string): Promise<Record<string, unknown>> {
    const call = this.owned(owner, callId);
    if (call.state !== 'up' || !call.dialog) {
      throw new CommandError('CALL_STATE', call.state === 'offered' ? `call ${callId} is not answered: answer sip.invite with reject instead` : `call ${callId} is not up (${call.state}): use sip.cancelOutbound`);
    }
    const status = await this.hangUp(call);
    return { callId, status };
  }

  async reinvite(owner: string, callId: string, sdp: string): Promise<Record<string, unknown>> {
    const call = this.owned(owner, callId);
    if (call.state !== 'up' || !call.dialog) throw new CommandError('CALL_STATE', `call ${callId} is not up (${call.state})`);
    const r = await this.sipRequest(call, 'INVITE', sdp);
    const res = parse(r.raw);
    return { callId, status: r.status, reason: r.reason, ...(r.status < 300 && res ? { sdp: res.body.toString('utf8') } : {}) };
  }

  /** The owner's connection closed: everything it owns goes at once. */
  releaseOwner(owner: string): void {
    for (const call of [...(this.byOwner.get(owner) ?? [])]) {
      if (call.state === 'up' && !call.byeBy) void this.hangUp(call).catch(() => undefined);
      else if (call.state === 'calling') void this.o.server.request({ type: 'cancel', id: call.callId }).catch(() => undefined);
      // offered: the owner's pending sip.invite fails with 'gone' → 480 (notAnswered)
    }
  }

  /**
   * The drain's deadline: BYE to every call that is up, CANCEL to every outbound INVITE still
   * out, 503 to every INVITE still offered; resolves when every one has its answer (the caller
   * bounds the wait).
   */
  async endAll(): Promise<void> {
    const work: Array<Promise<unknown>> = [];
    for (const call of [...this.calls.values()]) {
      if (call.state === 'up') work.push(this.hangUp(call).catch(() => undefined));
      else if (call.state === 'calling') work.push(this.o.server.request({ type: 'cancel', id: call.callId }).catch(() => undefined));
      else if (call.state === 'offered') this.finishOffer(call, 503, 'Service Unavailable', 'failed');
    }
    await Promise.all(work);
  }

  // ---- helpers ----

  private async hangUp(call: Call): Promise<number> {
    call.byeBy ??= 'local';
    try {
      const r = await this.sipRequest(call, 'BYE');
      return r.status;
    } catch (err) {
      // The dialog is gone already (ended by the far end meanwhile) or the BYE timed out.
      this.end(call, null);
      if (err instanceof CommandError) throw err;
      throw new CommandError('SIP_ERROR', (err as Error).message);
    }
  }

  private async sipRequest(call: Call, method: 'BYE' | 'INVITE', sdp?: string) {
    try {
      return await this.o.server.request(
        { type: 'request', dialog: call.dialog!, method, ...(sdp !== undefined ? { body: sdp, contentType: SDP } : {}) },
        { timeoutMs: SIP_REQUEST_TIMEOUT_MS, handover: true },
      );
    } catch (err) {
      const code = refusalOf<SipServerProtocol>(err);
      if (code === 'NO_DIALOG') throw new CommandError('CALL_STATE', `call ${call.callId} has ended`);
      throw new CommandError('SIP_ERROR', `${method} failed: ${(err as Error).message}`);
    }
  }

  private owned(owner: string, callId: string): Call {
    const call = this.calls.get(callId);
    if (!call || call.owner !== owner) throw new CommandError('CALL_NOT_FOUND', `no call ${callId} owned by this connection`);
    return call;
  }

  private add(call: Call): void {
    this.calls.set(call.callId, call);
    let set = this.byOwner.get(call.owner);
    if (!set) this.byOwner.set(call.owner, (set = new Set()));
    set.add(call);
    callsActive.set(this.calls.size);
  }

  /** Forget a call; `outcome` counts it (null: counted already, when it was answered). */
  private end(call: Call, outcome: string | null): void {
    if (call.state === 'ended') return;
    call.state = 'ended';
    if (outcome) callsTotal.inc({ direction: call.direction, outcome });
    if (this.calls.get(call.callId) === call) this.calls.delete(call.callId);
    if (call.dialog && this.byDialog.get(call.dialog) === call) this.byDialog.delete(call.dialog);
    const set = this.byOwner.get(call.owner);
    set?.delete(call);
    if (set && set.size === 0) this.byOwner.delete(call.owner);
    callsActive.set(this.calls.size);
  }
}

function parse(raw: string): SipMessage | undefined {
  const r = parseMessage(Buffer.from(raw, 'latin1'));
  return r.ok ? r.message : undefined;
}

/** A body sent as latin1 (byte for byte), read as the UTF-8 text it is. */
function text(latin1: string): string {
  return Buffer.from(latin1, 'latin1').toString('utf8');
}

/** The headers other than the ones the SIP layer owns, as `{Name: value}` (repeated ones joined by ", "). */
function otherHeaders(req: SipRequestEvent): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of req.headers) out[h.name] = out[h.name] !== undefined ? `${out[h.name]}, ${h.value}` : h.value;
  return out;
}
