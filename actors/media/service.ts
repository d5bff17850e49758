/**
 * The media bridge as a service of the daemon: its settings and its supervision tree (the
 * front on a thread of its own; session actors, started by the front, share the `media`
 * thread group).
 */
import { isIP } from 'node:net';
import { isAbsolute } from 'node:path';
import { readFileSync } from 'node:fs';
import { bool, int, oneOf, str, type Setting, type Values } from '../../runtime/config/settings.js';
import { parseOrigins } from '../../protocols/media/url-policy.js';
import { parseCidrList, type Cidr } from '../../protocols/media/ip.js';
import { defineService } from '../../runtime/service.js';
import { PEER_POLICIES } from '../../protocols/media/types.js';
import { BRIDGE_ID, type BridgeArgs } from '../media-bridge/messages.js';
import { isLoopback } from '../../runtime/http/bearer.js';
import { isValidBucketName } from '../../protocols/objstore/paths.js';
import { parseNetworks } from '../../protocols/media/sdp/address-policy.js';
import { normalOrigin } from '../media-bridge/upgrade-guard.js';

const ipOrEmpty = (v: string) => v === '' || isIP(v) !== 0;

export const mediaSettings = {
  port: int({ env: 'MEDIA_PORT', flag: 'media-port', description: 'Port of the command WebSocket', min: 0, max: 65535, default: 3002 }),
  host: str({ env: 'MEDIA_HOST', flag: 'media-host', description: 'Address the command WebSocket binds (loopback by default: the bridge is a backend; any other address needs MEDIA_TOKEN)', default: '127.0.0.1' }),
  token: str({ env: 'MEDIA_TOKEN', flag: 'media-token', description: 'Bearer token clients must present (required when MEDIA_HOST is not loopback)', default: '' }),
  advertisedAddress: str({ env: 'MEDIA_ADVERTISED_ADDRESS', flag: 'media-advertised-address', description: 'IP address put in SDP for peers to send media to', expect: 'an IPv4 or IPv6 address', default: '127.0.0.1', valid: (v) => isIP(v) !== 0 }),
  rtpBindAddress: str({ env: 'MEDIA_RTP_BIND_ADDRESS', flag: 'media-rtp-bind-address', description: 'Address the RTP sockets bind (empty: every address of the advertised family)', expect: 'an IP address or empty', default: '', valid: ipOrEmpty }),
  rtpPortMin: int({ env: 'MEDIA_RTP_PORT_MIN', flag: 'media-rtp-port-min', description: 'Lowest RTP port', min: 1024, max: 65534, default: 30000 }),
  rtpPortMax: int({ env: 'MEDIA_RTP_PORT_MAX', flag: 'media-rtp-port-max', description: 'Highest RTP port', min: 1025, max: 65535, default: 39999 }),
  mediaTimeoutMs: int({ env: 'MEDIA_TIMEOUT_MS', flag: 'media-timeout-ms', description: 'An endpoint that receives no media this long gets endpoint.media_timeout', min: 100, max: 3_600_000, default: 30_000 }),
  orphanTimeoutMs: int({ env: 'MEDIA_ORPHAN_TIMEOUT_MS', flag: 'media-orphan-timeout-ms', description: 'A session whose connection dropped lives this long, for session.attach, before it is destroyed', min: 0, max: 86_400_000, default: 60_000 }),
  maxEndpointsPerSession: int({ env: 'MEDIA_MAX_ENDPOINTS_PER_SESSION', flag: 'media-max-endpoints-per-session', description: 'max_endpoints_per_session: endpoints a session may hold', min: 1, max: 1000, default: 16 }),
  maxSessions: int({ env: 'MEDIA_MAX_SESSIONS', flag: 'media-max-sessions', description: 'Sessions the bridge holds at most', min: 1, max: 1_000_000, default: 5000 }),
  peerPolicy: oneOf({ env: 'MEDIA_PEER_POLICY', flag: 'media-peer-policy', description: 'Which sources an RTP endpoint accepts: strict (the SDP address and port), address (the SDP address, any port), latch (any; replies go where media comes from)', values: PEER_POLICIES, default: 'address' }),
  fileDir: str({ env: 'MEDIA_FILE_DIR', flag: 'media-file-dir', description: 'Directory file endpoints play local files from (empty: local file playback is off)', expect: 'an absolute directory path or empty', default: '', valid: (v) => isAbsolute(v) }),
  fileOrigins: {
    env: 'MEDIA_FILE_ORIGINS',
    flag: 'media-file-origins',
    description: 'Origins (http(s)://host[:port], comma-separated) file endpoints may download from; empty: URL playback is off',
    expect: 'comma-separated origins like https://media.example.com',
    default: [] as string[],
    parse: (raw: string) => parseOrigins(raw),
    show: (v: string[]) => v.join(',') || '(none: URL playback off)',
  } satisfies Setting<string[]>,
  fileNetworks: {
    env: 'MEDIA_FILE_NETWORKS',
    flag: 'media-file-networks',
    description: 'Networks (CIDR, comma-separated) where a file URL may resolve although they are loopback, private, link-local or otherwise not public; empty: public unicast addresses only',
    expect: 'comma-separated networks like 10.20.0.0/16,fd00:1::/64',
    default: [] as Cidr[],
    parse: (raw: string) => parseCidrList(raw),
    show: (v: Cidr[]) => v.map((c) => c.text).join(',') || '(none)',
  } satisfies Setting<Cidr[]>,
  fileCa: str({ env: 'MEDIA_FILE_CA', flag: 'media-file-ca', description: 'PEM file of extra CA certificates trusted for https file URLs (a private CA), beside the system ones', expect: 'an absolute file path or empty', default: '', valid: (v) => isAbsolute(v) }),
  fileMaxBytes: int({ env: 'MEDIA_FILE_MAX_BYTES', flag: 'media-file-max-bytes', description: 'Largest local file a file endpoint opens, in bytes', min: 1024, max: 2 ** 31, default: 100 * 1024 * 1024 }),
  wsConnectTimeoutMs: int({ env: 'MEDIA_WS_CONNECT_TIMEOUT_MS', flag: 'media-ws-connect-timeout-ms', description: 'A WebSocket PCM endpoint whose client has not dialled in this long is removed (with endpoint.ws.connect_timeout)', min: 100, max: 3_600_000, default: 30_000 }),
  recordingDir: str({ env: 'MEDIA_RECORDING_DIR', flag: 'media-recording-dir', description: 'Directory recording.start writes PCAP files to (empty: recording is off)', expect: 'an absolute directory path or empty', default: '', valid: (v) => isAbsolute(v) }),
  recordingQueuePackets: int({ env: 'MEDIA_RECORDING_QUEUE_PACKETS', flag: 'media-recording-queue-packets', description: 'Packets a recording keeps waiting for the disk at most; beyond, they are dropped and counted (dropped_packets)', min: 1, max: 1_000_000, default: 1000 }),
  recordingBucket: str({ env: 'MEDIA_RECORDING_BUCKET', flag: 'media-recording-bucket', description: "Bucket a finished recording is stored in as an object (<bucket>/<session_id>/<file name>) when the object store runs in this daemon; the local file is then deleted (empty: recordings stay in MEDIA_RECORDING_DIR)", expect: 'a bucket name (no /, not starting with $) or empty', default: '', valid: (v) => v === '' || isValidBucketName(v) }),
  maxSessionsPerConnection: int({ env: 'MEDIA_MAX_SESSIONS_PER_CONNECTION', flag: 'media-max-sessions-per-connection', description: 'Sessions one command connection may hold at once (created or attached)', min: 1, max: 1_000_000, default: 500 }),
  allowedOrigins: str({ env: 'MEDIA_ALLOWED_ORIGINS', flag: 'media-allowed-origins', description: 'Comma-separated origins (scheme://host[:port]) whose web pages may open the command channel (empty: an upgrade with an Origin header is refused)', expect: 'comma-separated origins like https://ops.example:8443', default: '', valid: (v) => v.split(',').every((o) => /^[a-z][a-z0-9+.-]*:\/\/[^/\s]+\/?$/i.test(o.trim())) }),
  allowedNetworks: str({ env: 'MEDIA_ALLOWED_NETWORKS', flag: 'media-allowed-networks', description: 'Comma-separated networks (CIDR) in which SDP may name broadcast, multicast, unspecified or link-local media addresses (empty: such addresses are refused)', expect: 'comma-separated IP addresses or CIDR networks', default: '', valid: (v) => parseNetworks(v).ok }),
  allowOpenWithoutToken: bool({ env: 'MEDIA_ALLOW_OPEN', flag: 'media-allow-open', description: 'Allow a non-loopback MEDIA_HOST without a token (not recommended)', default: false }),
};

/** The media settings' values (defaults and all: `resolve(mediaSettings, {}, {})` gives the defaults). */
export type MediaValues = Values<typeof mediaSettings>;

export const BRIDGE_MODULE = new URL('../media-bridge/actor.js', import.meta.url).href;
export const SESSION_MODULE = new URL('../media-session/actor.js', import.meta.url).href;

function readCa(path: string): string {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`MEDIA_FILE_CA ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`MEDIA_FILE_CA ${path} holds no PEM certificate`);
  return pem;
}

/** The bridge front's arguments from the settings' values; throws with a clear message on a bad mix. */
export function bridgeArgs(v: MediaValues): BridgeArgs {
  const token = v.token ? v.token : null;
  if (!token && !isLoopback(v.host) && !v.allowOpenWithoutToken) {
    throw new Error(`MEDIA_HOST ${v.host} is not a loopback address: set MEDIA_TOKEN (clients then send Authorization: Bearer <token>)`);
  }
  if (v.recordingBucket && !v.recordingDir) throw new Error(`MEDIA_RECORDING_BUCKET ${v.recordingBucket} needs MEDIA_RECORDING_DIR: a recording is written there first and stored as an object when it ends`);
  if (v.rtpPortMax - v.rtpPortMin < 3) throw new Error(`MEDIA_RTP_PORT_MIN ${v.rtpPortMin} and MEDIA_RTP_PORT_MAX ${v.rtpPortMax} leave no room for an RTP/RTCP pair`);
  const v6 = isIP(v.advertisedAddress) === 6;
  return {
    host: v.host,
    port: v.port,
    token,
    advertisedAddress: v.advertisedAddress,
    // Empty: every address of the advertised family.
    rtpBindAddress: v.rtpBindAddress || (v6 ? '::' : '0.0.0.0'),
    rtpPortMin: v.rtpPortMin,
    rtpPortMax: v.rtpPortMax,
    mediaTimeoutMs: v.mediaTimeoutMs,
    orphanTimeoutMs: v.orphanTimeoutMs,
    maxEndpointsPerSession: v.maxEndpointsPerSession,
    maxSessions: v.maxSessions,
    maxSessionsPerConnection: v.maxSessionsPerConnection,
    allowedOrigins: v.allowedOrigins.split(',').map((o) => normalOrigin(o)).filter(Boolean),
    allowedNetworks: v.allowedNetworks.split(',').map((n) => n.trim()).filter(Boolean),
    peerPolicy: v.peerPolicy,
    fileDir: v.fileDir || null,
    fileMaxBytes: v.fileMaxBytes,
    urlPolicy: { origins: v.fileOrigins, networks: v.fileNetworks },
    fileCa: v.fileCa ? readCa(v.fileCa) : null,
    wsConnectTimeoutMs: v.wsConnectTimeoutMs,
    recordingDir: v.recordingDir || null,
    recordingQueuePackets: v.recordingQueuePackets,
    recordingBucket: v.recordingBucket || null,
    sessionModule: SESSION_MODULE,
  };
}

export const service = defineService({
  name: 'media',
  settings: mediaSettings,
  supervisor({ values }) {
    return {
      id: 'media.supervisor',
      children: [{ id: BRIDGE_ID, module: BRIDGE_MODULE, args: bridgeArgs(values), shutdownMs: 10_000 }],
    };
  },
});
