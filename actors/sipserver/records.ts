/**
 * The SIP server core's records: a server transaction, a dialog and a client transaction as
 * the core keeps them (live state of one actor instance; nothing here is checkpointed).
 */
import type * as sip from '../../protocols/sip/index.js';
import type { Dialog, SipRequest, SipResponse } from '../../protocols/sip/index.js';
import type { SipSource } from './gateway-messages.js';
import type { CoreError } from './gateway-input.js';

export interface ServerTx {
  /**
   * The request, until it is answered finally (`final`): the transaction lives up to 64·T1
   * more to absorb retransmissions, and a busy server holds ~130 000 of them.
   */
  request?: SipRequest;
  source: SipSource;
  toTag: string;
  final: boolean;
  /** The gateway the request went to. */
  gateway?: string;
  dialog?: string;
  mergeKey?: string;
  /** When the gateway must have answered finally (408 then). */
  answerBy?: number;
}

export interface DialogEntry {
  dialog: Dialog;
  gateway: string;
  source: SipSource;
  /**
   * 2xx to (re-)INVITE awaiting its ACK: its bytes and where each retransmission goes (read
   * once from its Via, not parsed again at every retransmission).
   */
  twoXx?: { schedule: sip.TwoXxSchedule; bytes: Buffer; dest: SipSource };
  /** Our 2xx was never ACKed: the BYE the core sent ends it (reported as `no-ack`). */
  noAck?: boolean;
}

export interface ClientTx {
  dest: SipSource;
  request: SipRequest;
  /** The dialog of an in-dialog request; undefined for an outbound INVITE. */
  dialog?: string;
  /** Outbound INVITE: the caller's id, the gateway of the dialog, a CANCEL asked before any 1xx. */
  outbound?: { id: string; gateway: string; provisional: boolean; cancelAsked: boolean; auth?: { username: string; password: string }; authTried: boolean };
  resolve(res: SipResponse): void;
  reject(err: CoreError): void;
}
