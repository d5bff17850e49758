/**
 * What the SIP server casts to an attached gateway actor (the gateway's message union imports
 * this). Every SIP message travels as `raw` text (latin1); `parseMessage(Buffer.from(raw,
 * 'latin1'))` gives the typed message back. Answers go the other way as `respond` /
 * `request` (actors/sipserver/messages.ts).
 */
export interface SipSource {
  protocol: 'udp' | 'tcp';
  address: string;
  port: number;
}

export type SipServerEvent =
  /**
   * A request for this gateway: a new out-of-dialog request routed to its tag (`dialog`
   * undefined), or a request inside one of its dialogs (`dialog` set). Answer with
   * `respond {key, ...}`. INVITE retransmissions are absorbed: each INVITE comes once.
   */
  | { type: 'sip.request'; key: string; method: string; callId: string; dialog?: string; source: SipSource; raw: string }
  /** The ACK of our 2xx arrived: the dialog is confirmed. */
  | { type: 'sip.ack'; dialog: string; callId: string; raw: string }
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
