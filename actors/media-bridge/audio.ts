/**
 * The audio plane of WebSocket PCM endpoints, on the command port: the single-use connect
 * tokens the front hands out, the dial-in at `/audio/<token>`, and the clients' sockets. The
 * front's thread owns the sockets; audio crosses to and from the session's thread as runtime
 * messages (one per client message inbound, one per 20 ms frame outbound).
 *
 * Decisions:
 * - The token is the credential of a dial-in: no bearer token is asked on `/audio/` (the
 *   command channel's token still guards who can create endpoints). A token is a random UUID,
 *   registered when `endpoint.create_websocket` answers and taken by the first dial-in that
 *   presents it; it is forgotten when the endpoint ends (removed, timed out, session closed).
 * - A dial-in with an `Origin` header (a web page) is refused with 403 before the upgrade: no
 *   page the operator opens can reach a session's audio. An unknown, malformed or used token
 *   is upgraded and closed at once with 1008 (the close code tells a client why).
 * - Inbound is bounded: a client may be ahead of real time by 1 s of audio at most (its byte
 *   rate × (time since dial-in + 1 s)); beyond that it is closed with 1008, so a client cannot
 *   make the bridge buffer without end. Text messages are ignored.
 * - Outbound: a client that does not read gets its frames dropped once 256 KiB wait in its
 *   socket (counted), not buffered without end.
 */
import type { WebSocket } from '@trufflesuite/uws-js-unofficial';
import { AUDIO_PATH_PREFIX } from '../../protocols/media/commands.js';

/** Extra audio a client may send ahead of real time before it is closed. */
export const INBOUND_BURST_MS = 1000;
/** Outbound bytes waiting in a client's socket beyond which its frames are dropped. */
export const OUTBOUND_BUFFER_LIMIT = 256 * 1024;
/** WebSocket close code for a refused token or an overload (RFC 6455: policy violation). */
export const POLICY_VIOLATION = 1008;

export interface AudioUserData {
  /** Set for a dial-in on the audio path: the token it presented. */
  audioToken?: string;
}

interface Expected {
  endpointId: string;
  sessionActor: string;
  sampleRate: number;
}

interface AudioConn {
  ws: WebSocket<AudioUserData>;
  endpointId: string;
  sessionActor: string;
  byteRate: number;
  openedAt: number;
  bytesIn: number;
  dropped: number;
  open: boolean;
}

/** What the audio plane needs of the front: its runtime messages to session actors. */
export interface AudioEnv {
  opened(sessionActor: string, endpointId: string): Promise<boolean>;
  audio(sessionActor: string, endpointId: string, data: ArrayBuffer): void;
  closed(sessionActor: string, endpointId: string): void;
  now(): number;
}

/** The token of an audio path, or null when the URL is not one. */
export function audioToken(url: string): string | null {
  return url.startsWith(AUDIO_PATH_PREFIX) ? url.slice(AUDIO_PATH_PREFIX.length) : null;
}

export class AudioPlane {
  private readonly expected = new Map<string, Expected>();
  private readonly tokenOf = new Map<string, string>();
  private readonly conns = new Map<string, AudioConn>();
  private readonly bySocket = new Map<WebSocket<AudioUserData>, AudioConn>();

  constructor(private readonly env: AudioEnv) {}

  /** `endpoint.create_websocket` answered: one dial-in with `token` is accepted for the endpoint. */
  expect(token: string, e: Expected): void {
    this.expected.set(token, e);
    this.tokenOf.set(e.endpointId, token);
  }

  /** A dial-in was upgraded: take its token, or close it with 1008. */
  async open(ws: WebSocket<AudioUserData>): Promise<void> {
    const token = ws.getUserData().audioToken ?? '';
    const e = this.expected.get(token);
    if (!e) {
      ws.end(POLICY_VIOLATION, 'unknown or already used connect token');
      return;
    }
    this.expected.delete(token);
    this.tokenOf.delete(e.endpointId);
    const conn: AudioConn = { ws, endpointId: e.endpointId, sessionActor: e.sessionActor, byteRate: e.sampleRate * 2, openedAt: this.env.now(), bytesIn: 0, dropped: 0, open: true };
    this.conns.set(e.endpointId, conn);
    this.bySocket.set(ws, conn);
    const ok = await this.env.opened(e.sessionActor, e.endpointId).catch(() => false);
    if (!ok && conn.open) this.shut(conn, POLICY_VIOLATION, 'the endpoint no longer exists');
  }

  message(ws: WebSocket<AudioUserData>, data: ArrayBuffer, isBinary: boolean): void {
    const conn = this.bySocket.get(ws);
    if (!conn?.open || !isBinary) return;
    conn.bytesIn += data.byteLength;
    const allowed = conn.byteRate * ((this.env.now() - conn.openedAt + INBOUND_BURST_MS) / 1000);
    if (conn.bytesIn > allowed) {
      this.shut(conn, POLICY_VIOLATION, 'inbound audio faster than real time');
      return;
    }
    // uWS reuses the message's memory after the callback: the session gets a copy.
    this.env.audio(conn.sessionActor, conn.endpointId, data.slice(0));
  }

  /** The socket closed (the client, or us). */
  closed(ws: WebSocket<AudioUserData>): void {
    const conn = this.bySocket.get(ws);
    if (!conn) return;
    conn.open = false;
    this.bySocket.delete(ws);
    if (this.conns.get(conn.endpointId) === conn) this.conns.delete(conn.endpointId);
    this.env.closed(conn.sessionActor, conn.endpointId);
  }

  /** A frame from the session for the endpoint's client. */
  send(endpointId: string, data: ArrayBuffer): void {
    const conn = this.conns.get(endpointId);
    if (!conn?.open) return;
    if (conn.ws.getBufferedAmount() > OUTBOUND_BUFFER_LIMIT) {
      conn.dropped++;
      return;
    }
    conn.ws.send(data, true);
  }

  /** The endpoint ended: forget its token, close its client. */
  endpointEnded(endpointId: string, reason: string): void {
    const token = this.tokenOf.get(endpointId);
    if (token !== undefined) {
      this.expected.delete(token);
      this.tokenOf.delete(endpointId);
    }
    const conn = this.conns.get(endpointId);
    if (conn?.open) this.shut(conn, 1000, `endpoint ${reason}`);
  }

  private shut(conn: AudioConn, code: number, reason: string): void {
    conn.open = false;
    try {
      conn.ws.end(code, reason);
    } catch {
      // already closed: the close handler has run
    }
  }
}
