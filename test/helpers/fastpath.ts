/** Helpers of the native packet path's addon-level tests: plain UDP peers and native sockets. */
import type { ExecutionContext } from 'ava';
import dgram from 'node:dgram';
import { fastpath, setReceiver } from '../../actors/media-session/fastpath.js';

export const addon = fastpath();

/** A plain UDP socket on loopback that keeps what it receives. */
export async function udp(t: ExecutionContext): Promise<{ socket: dgram.Socket; port: number; got: Buffer[] }> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', () => r()));
  t.teardown(() => socket.close());
  const got: Buffer[] = [];
  socket.on('message', (m) => got.push(m));
  return { socket, port: socket.address().port, got };
}

/** A native socket on a port the kernel just gave a dgram socket (then freed); closed at teardown. */
export async function nativeSocket(t: ExecutionContext): Promise<{ h: number; port: number }> {
  for (let i = 0; i < 20; i++) {
    const s = dgram.createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    const port = s.address().port;
    await new Promise<void>((r) => s.close(() => r()));
    const h = addon!.open(4, '127.0.0.1', port);
    if (h >= 0) {
      t.teardown(() => addon!.close(h));
      return { h, port };
    }
  }
  throw new Error('no free port for a native socket');
}

/** Wait until `pred` holds, or `ms` passed. */
export async function until(pred: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
}

/**
 * The rig of a rule test: two native sockets (source, destination), a plain sender and a plain
 * listener, and the packets the source hands to JS.
 */
export async function ruleRig(t: ExecutionContext) {
  const src = await nativeSocket(t);
  const dst = await nativeSocket(t);
  const sender = await udp(t);
  const listener = await udp(t);
  const toJs: Buffer[] = [];
  setReceiver(src.h, (d) => toJs.push(Buffer.from(d)));
  t.teardown(() => setReceiver(src.h, undefined));
  return { src, dst, sender, listener, toJs };
}
