/**
 * Decoding an Ogg Opus file for a file endpoint: the probe and trimming rules are
 * protocols/media/codecs/ogg-opus.ts; this runs each audio packet through libopus (the bridge's
 * own Opus decoder from codecs.ts, 48 kHz mono: libopus mixes a stereo packet down to mono).
 * A packet libopus refuses is a refusal naming the packet; nothing is played from such a file.
 */
import { probeOggOpus, trimOpusStream, type OggOpusInfo } from '../../protocols/media/codecs/ogg-opus.js';
import { createDecoder } from './codecs.js';

export function decodeOggOpus(file: Uint8Array, gainDb: number): { ok: true; pcm: Int16Array; info: OggOpusInfo } | { ok: false; message: string } {
  const probe = probeOggOpus(file);
  if (!probe.ok) return probe;
  const { info } = probe;
  const dec = createDecoder('opus');
  const decoded: Int16Array[] = [];
  for (let i = 0; i < info.packets.length; i++) {
    const packet = info.packets[i]!;
    if (packet.length === 0) return { ok: false, message: `bad Ogg Opus file: audio packet ${i + 1} is empty` };
    try {
      decoded.push(dec.decode(packet));
    } catch (err) {
      return { ok: false, message: `corrupt Ogg Opus file: audio packet ${i + 1} cannot be decoded (${(err as Error).message})` };
    }
  }
  const trimmed = trimOpusStream(info, decoded, gainDb);
  return trimmed.ok ? { ok: true, pcm: trimmed.pcm, info } : trimmed;
}
