/**
 * The refusals of the media link: a thrown `MediaLinkError` carries the `code` and `message` the
 * gateway puts in its envelope as they are. The codes are the media bridge's own (a refusal the
 * bridge gave is passed through unchanged) plus one of ours, BACKEND_UNAVAILABLE: the media bridge
 * that holds the session (or every one that could take a new session) cannot be reached.
 */
import { MediaBridgeError } from '../../media-bridge/client.js';
import type { ErrorCode } from '../../../protocols/media/envelope.js';

export type MediaLinkErrorCode = ErrorCode | 'BACKEND_UNAVAILABLE';

export class MediaLinkError extends Error {
  constructor(readonly code: MediaLinkErrorCode, message: string) {
    super(message);
    this.name = 'MediaLinkError';
  }
}

/** The bridge's refusal of an unknown session, given for every session the owner does not own. */
export function unknownSession(sessionId: string): MediaLinkError {
  return new MediaLinkError('SESSION_NOT_FOUND', `session ${sessionId} does not exist`);
}

export function unavailable(why: string): MediaLinkError {
  return new MediaLinkError('BACKEND_UNAVAILABLE', `the media bridge backend is unavailable: ${why}`);
}

/**
 * What a failed bridge call becomes: the bridge's refusal as it gave it (the client prefixes its
 * message with `method: CODE: `, taken off here), a lost connection or a missing reply as
 * BACKEND_UNAVAILABLE.
 */
export function fromBridge(err: unknown): MediaLinkError {
  if (err instanceof MediaLinkError) return err;
  if (err instanceof MediaBridgeError) {
    const prefix = `${err.method}: ${err.code}: `;
    return new MediaLinkError(err.code, err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message);
  }
  return unavailable(`${(err as Error).message}; the command's outcome is unknown`);
}

/** An error of the link's own code (a bug): INTERNAL_ERROR, as the bridge answers its own. */
export function asLinkError(err: unknown): MediaLinkError {
  if (err instanceof MediaLinkError) return err;
  return new MediaLinkError('INTERNAL_ERROR', `the gateway's media link failed: ${(err as Error)?.message ?? String(err)}`);
}
