/**
 * protocols/sip: the pure RFC 3261 core of the session gateway. This file is its whole public
 * face; the SIP server actor (actors/sipserver) and the gateway import from here only.
 *
 * Pure: no sockets, no timers, no clock, no randomness. Time is a number the caller passes in
 * (`now`, in ms, any monotonic origin); random bytes for branches, tags and Call-IDs are
 * parameters. See docs/gateway.md, section "SIP core (protocols/sip)".
 *
 * Layers, bottom up:
 * - messages: parseMessage / serializeMessage, URIs, name-addr, Via, header helpers;
 * - framing: frameStream for TCP;
 * - transactions: the four RFC 3261 §17 machines (+ RFC 6026), matching keys, and a
 *   TransactionTable driven by an injected clock;
 * - dialogs: §12-§15 (routing, CSeq order, glare, CANCEL, ACK for 2xx, 2xx retransmission);
 * - building: responses, requests, ACK, CANCEL, identifiers; digest authentication;
 * - refusals: the §8.2 checks a UAS runs on a new request, and the OPTIONS answer.
 */
export type { CSeq, Header, MediaType, NameAddr, OtherUri, Params, ParseResult, PartialMessage, SipMessage, SipRequest, SipResponse, SipUri, Uri, Via } from './types.js';
export { isSipUri } from './types.js';

export { DEFAULT_MAX_BYTES, DEFAULT_MAX_HEADERS, headerValue, headerValues, parseMessage, type ParseOptions } from './parse.js';
export { serializeMessage } from './serialize.js';
export { formatUri, isLooseRouter, parseUri, uriEquals } from './uri.js';
export { formatNameAddr, parseNameAddr, tagOf, withTag } from './address.js';
export { branchOf, formatVia, isRfc3261Branch, MAGIC_COOKIE, maddrOf, parseVia, receivedOf, responseTarget, rportOf, sentByKey, ttlOf } from './via.js';
export { canonicalName, isListHeader } from './headers.js';
export { formatMediaType, KNOWN_METHODS, parseCallId } from './fields.js';
export { frameStream, type Frame } from './framing.js';

export { DEFAULT_TIMERS, timerDuration, type TimerConfig, type TimerName } from './timers.js';
export {
  createClientTransaction,
  createServerTransaction,
  step,
  type Step,
  type Transaction,
  type TransactionAction,
  type TransactionEvent,
  type TransactionKind,
  type TransactionOptions,
  type TransactionState,
} from './transaction.js';
export { cancelledInviteKey, clientTransactionKey, responseTransactionKey, serverTransactionKey } from './matching.js';
export { TransactionTable, type KeyedAction, type TableResult } from './table.js';

export {
  cancelResponses,
  confirmUacDialog,
  createAckFor2xx,
  createInDialogRequest,
  createUacDialog,
  createUasDialog,
  dialogKey,
  glareRetryDelay,
  localInviteDone,
  noDialogResponse,
  on2xxRetransmitTimer,
  receiveInDialogRequest,
  remoteInviteDone,
  requestDialogKey,
  responseDialogKey,
  routeFor,
  start2xxRetransmit,
  type Dialog,
  type DialogId,
  type InDialogOptions,
  type InDialogVerdict,
  type TwoXxSchedule,
} from './dialog.js';

export {
  createCancel,
  createNon2xxAck,
  createRequest,
  createResponse,
  newBranch,
  newCallId,
  newTag,
  rawErrorResponse,
  REASON_PHRASES,
  type RequestFields,
  type ResponseOptions,
} from './build.js';
export { authorizeRequest, digestAuthorization, digestResponse, parseDigestChallenge, type DigestChallenge, type DigestCredentials, type DigestRequest } from './digest.js';
export { answerOptions, checkRequest, mergeKey, notAcceptableHere, refusalResponse, type Refusal, type ServerPolicy } from './refusals.js';
