/**
 * What each command answers and what each event carries: the wire shapes a client sees
 * (types only). The typed client (actors/media-bridge/client.ts) is built on these.
 */
import type { Direction } from './types.js';
import type { Method, ToneName } from './commands.js';

export interface EndpointInfo {
  endpoint_id: string;
  type: 'rtp' | 'tone' | 'webrtc' | 'file' | 'bridge' | 'websocket';
  state: string;
  direction: Direction;
  direction_mode: 'auto' | 'manual';
  [field: string]: unknown;
}

/** States of a local file endpoint (spec: playing → paused → playing → finished). */
export type FileState = 'buffering' | 'playing' | 'paused' | 'finished';

export interface SessionInfo {
  session_id: string;
  created_at_epoch_ms: number;
  thread_id: number;
  endpoints: EndpointInfo[];
  routes: Array<{ destination: string; sources: string[]; mode: 'forward' | 'mix' | 'silent' }>;
  relays_held: number;
  /** The session's running recordings. */
  recordings?: Array<{ recording_id: string; endpoint_id: string | null; file_path: string; started_at_epoch_ms: number; packets: number; dropped_packets: number }>;
}

/** What a recording's stop says (recording.stop's answer, and recording.stopped's payload). */
export interface RecordingSummary {
  recording_id: string;
  /** The recorded endpoint; null: the whole session. */
  endpoint_id: string | null;
  /** The PCAP file, in the recordings directory (MEDIA_RECORDING_DIR), when it was not stored as an object. */
  file_path?: string;
  /** Where the object store holds it (`<MEDIA_RECORDING_BUCKET>/<session_id>/<file name>`), when stored. */
  object_path?: string;
  object_id?: string;
  /** Why the object store did not take it (the file stays at file_path). */
  store_error?: string;
  /** Records written (RTP and RTCP datagrams). */
  packets: number;
  /** Records lost: the write queue was full, or the disk failed. */
  dropped_packets: number;
  /** Bytes of the file (the 24-byte header included). */
  bytes: number;
  started_at_epoch_ms: number;
  stopped_at_epoch_ms: number;
  duration_ms: number;
}

/** Why a recording stopped without recording.stop. */
export type RecordingStopReason = 'transferred' | 'endpoint_removed' | 'session_destroyed' | 'io_error';

export interface Results {
  'session.create': { session_id: string };
  'session.attach': { session_id: string; attached: true };
  'session.info': SessionInfo;
  'session.destroy': { session_id: string; destroyed: true };
  'endpoint.rtp.create_from_offer': { endpoint_id: string; sdp_answer: string };
  'endpoint.rtp.create_offer': { endpoint_id: string; sdp_offer: string };
  'endpoint.rtp.accept_answer': Record<string, never>;
  'endpoint.accept_answer': Record<string, never>;
  'endpoint.rtp.reinvite': { sdp_answer: string };
  'endpoint.rtp.srtp_rekey': { sdp: string };
  'endpoint.create_tone': { endpoint_id: string; tone: ToneName };
  'endpoint.update_direction': Record<string, never>;
  'endpoint.remove': { removed_at_epoch_ms: number };
  'endpoint.transfer': { endpoint_id: string; target_session_id: string };
  'endpoint.create_file': { endpoint_id: string; state: FileState; duration_ms: number };
  'endpoint.file.pause': { state: FileState };
  'endpoint.file.resume': { state: FileState };
  'endpoint.file.seek': { state: FileState; position_ms: number };
  'endpoint.create_websocket': { endpoint_id: string; connect_token: string; audio_path: string };
  'endpoint.create_bridge': { endpoint_id: string; target_endpoint_id: string };
  'recording.start': { recording_id: string; endpoint_id: string | null; file_path: string; started_at_epoch_ms: number };
  'recording.stop': RecordingSummary;
  // The spec's WebRTC results. This version of the bridge answers these NOT_IMPLEMENTED.
  'endpoint.webrtc.create_from_offer': { endpoint_id: string; sdp_answer: string };
  'endpoint.webrtc.create_offer': { endpoint_id: string; sdp_offer: string };
  'endpoint.webrtc.accept_answer': Record<string, never>;
  'endpoint.webrtc.accept_offer': { sdp_answer: string };
  'endpoint.webrtc.ice_restart': { sdp_offer: string; offer_generation: number };
}

/** Every method has its result declared: a method added to SHAPES without one is a compile error here. */
type Assert<T extends true> = T;
export type ResultsCoverMethods = Assert<[Exclude<Method, keyof Results>] extends [never] ? true : false>;

export interface Events {
  'endpoint.state_changed': { session_id: string; endpoint_id: string; type: string; state: string; previous_state: string };
  'endpoint.tone.finished': { session_id: string; endpoint_id: string; tone: ToneName; played_ms: number };
  'endpoint.media_timeout': { session_id: string; endpoint_id: string; last_packet_at: number | null; timeout_ms: number };
  'endpoint.transferred_out': { session_id: string; endpoint_id: string; target_session_id: string };
  'endpoint.transferred_in': { session_id: string; endpoint_id: string; source_session_id: string };
  'session.detached': { session_id: string; reason: string };
  /** A file endpoint played to its end (its last loop); it stays, `finished`, until removed. */
  'endpoint.file.finished': { session_id: string; endpoint_id: string; reason: 'completed' | 'error'; played_ms: number; error?: string };
  /** A WebSocket endpoint nobody dialled in time: it has been removed. */
  'endpoint.ws.connect_timeout': { session_id: string; endpoint_id: string; timeout_ms: number; removed_at_epoch_ms: number };
  /** Another session bridged itself to this one: `endpoint_id` is this session's side of the pair. */
  'endpoint.bridged': { session_id: string; endpoint_id: string; peer_session_id: string; peer_endpoint_id: string };
  /** The other side of a bridge went (removed, or its session ended): this side has been removed too. */
  'endpoint.bridge.removed': { session_id: string; endpoint_id: string; peer_session_id: string; reason: 'peer removed' | 'peer session closed'; removed_at_epoch_ms: number };
  /** A recording ended without recording.stop; its file is complete and closed. `error`: the disk's, for io_error. */
  'recording.stopped': { session_id: string; reason: RecordingStopReason; error?: string } & RecordingSummary;
}
