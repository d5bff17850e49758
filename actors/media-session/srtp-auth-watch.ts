/**
 * Counting the SRTP and SRTCP authentication failures of a werift peer connection. werift
 * (0.24.4) decrypts inside its RTCDtlsTransport: a packet whose tag does not verify makes its
 * `SrtpSession.decrypt` (or `SrtcpSession.decrypt`) throw `SrtpAuthenticationError`, which the
 * transport catches and drops with a debug log; no event, no counter, no option. What it does
 * expose is the session objects themselves, as the transport's own `srtp` and `srtcp` properties,
 * which it replaces at each DTLS (re)start and reads at each packet.
 *
 * So, without touching node_modules: those two properties of each transport become accessors
 * that wrap the `decrypt` of every session assigned to them, and count the authentication errors
 * on their way to werift's catch (the packet is still dropped by werift). If a werift release
 * changes this shape, `watchSrtpAuth` says so (false) and nothing is counted;
 * test/media/webrtc-srtp.test.ts fails then, rather than the count silently staying at zero.
 */

/** The werift transport, as far as this file relies on it. */
interface DtlsLike {
  srtp?: unknown;
  srtcp?: unknown;
}

const watched = new WeakSet<object>();

/** Count `onFailure` for each packet whose authentication fails in `dtls`; false when werift's shape is not the one known. */
export function watchSrtpAuth(dtls: DtlsLike, onFailure: () => void): boolean {
  if (watched.has(dtls)) return true;
  const props = ['srtp', 'srtcp'] as const;
  const descriptors = props.map((p) => Object.getOwnPropertyDescriptor(dtls, p));
  if (descriptors.some((d) => !d || !d.configurable || !('value' in d))) return false;
  props.forEach((prop, i) => {
    let session = wrap(descriptors[i]!.value, onFailure);
    Object.defineProperty(dtls, prop, {
      configurable: true,
      enumerable: true,
      get: () => session,
      set: (next: unknown) => {
        session = wrap(next, onFailure);
      },
    });
  });
  watched.add(dtls);
  return true;
}

const wrapped = new WeakSet<object>();

function wrap(session: unknown, onFailure: () => void): unknown {
  const s = session as { decrypt?: (data: Buffer) => Buffer } | undefined;
  if (!s || typeof s.decrypt !== 'function' || wrapped.has(s)) return session;
  const decrypt = s.decrypt.bind(s);
  s.decrypt = (data: Buffer) => {
    try {
      return decrypt(data);
    } catch (err) {
      if ((err as Error | undefined)?.name === 'SrtpAuthenticationError') onFailure();
      throw err;
    }
  };
  wrapped.add(s);
  return session;
}
