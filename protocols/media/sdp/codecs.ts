/**
 * Codec matching and payload-type mapping.
 *
 * A payload type is identified by its rtpmap encoding name (case-insensitive) and clock rate;
 * the static PTs 0 (PCMU), 8 (PCMA) and 9 (G722) may come without rtpmap. PCMU/PCMA/G722 must
 * be 8000 Hz mono (channel count absent or 1); opus must be opus/48000 with 2 channels (or the
 * count absent); telephone-event is accepted at 8000 and 48000 Hz. Dynamic PTs without rtpmap,
 * non-numeric formats and PTs outside 0..127 are ignored.
 */
import {
  CODEC_NAMES, CODECS, TELEPHONE_EVENT_PT_48K, TELEPHONE_EVENT_PT_8K, type CodecName,
} from '../types.js';
import type { RtpMap, SectionView } from './parse.js';
import { fail, ok, type CodecChoice, type Result, type TelephoneEvent } from './types.js';

export type Identified = { kind: 'codec'; choice: CodecChoice } | { kind: 'te'; te: TelephoneEvent };

const STATIC: Record<number, CodecName> = { 0: 'pcmu', 8: 'pcma', 9: 'g722' };

export function choice(name: CodecName, pt: number): CodecChoice {
  const c = CODECS[name];
  return { name, pt, clockRate: c.clockRate, channels: c.channels };
}

/** What a payload type of an m-line is, or null if we do not support it. */
export function identify(pt: number, map: RtpMap | undefined): Identified | null {
  if (!Number.isInteger(pt) || pt < 0 || pt > 127) return null;
  if (map === undefined) {
    const name = STATIC[pt];
    return name ? { kind: 'codec', choice: choice(name, pt) } : null;
  }
  const enc = map.encoding.toLowerCase();
  if (enc === 'telephone-event') {
    return map.rate === 8000 || map.rate === 48000 ? { kind: 'te', te: { pt, clockRate: map.rate } } : null;
  }
  for (const name of CODEC_NAMES) {
    const c = CODECS[name];
    if (c.encoding.toLowerCase() !== enc || map.rate !== c.clockRate) continue;
    const channels = map.channels ?? c.channels;
    return channels === c.channels ? { kind: 'codec', choice: choice(name, pt) } : null;
  }
  return null;
}

export interface SectionCodecs {
  /** Supported (and allowed) codecs in the section's order, with its PTs. */
  codecs: CodecChoice[];
  /** Telephone-event PTs in the section's order. */
  telephoneEvents: TelephoneEvent[];
}

/** Codecs of an m-section that we support, limited to `allowed`. */
export function sectionCodecs(s: SectionView, allowed: readonly CodecName[]): SectionCodecs {
  const codecs: CodecChoice[] = [];
  const telephoneEvents: TelephoneEvent[] = [];
  const seen = new Set<number>();
  for (const f of s.formats) {
    if (!/^\d{1,3}$/.test(f)) continue;
    const pt = Number(f);
    if (seen.has(pt)) continue;
    seen.add(pt);
    const id = identify(pt, s.rtpmap.get(pt));
    if (id?.kind === 'codec' && allowed.includes(id.choice.name)) codecs.push(id.choice);
    else if (id?.kind === 'te') telephoneEvents.push(id.te);
  }
  return { codecs, telephoneEvents };
}

/** The telephone-event entry at the send codec's clock rate, first in offer order. */
export function telephoneEventFor(tes: readonly TelephoneEvent[], clockRate: number): TelephoneEvent | null {
  return tes.find((t) => t.clockRate === clockRate) ?? null;
}

/** Validates a `codecs` parameter: known names, no duplicates kept, not empty. */
export function checkCodecList(list: readonly string[] | undefined): Result<CodecName[]> {
  if (list === undefined) return ok([...CODEC_NAMES]);
  if (!Array.isArray(list)) return fail('codecs must be an array of codec names');
  const out: CodecName[] = [];
  for (const n of list) {
    if (!(CODEC_NAMES as readonly string[]).includes(n)) return fail(`unknown codec "${String(n)}" (known: ${CODEC_NAMES.join(', ')})`);
    if (!out.includes(n as CodecName)) out.push(n as CodecName);
  }
  if (out.length === 0) return fail('codecs must name at least one codec');
  return ok(out);
}

/** What we offer for a codec list: default PTs, telephone-event 101 at 8 kHz and 110 at 48 kHz with opus. */
export function offerPayloads(codecs: readonly CodecName[]): SectionCodecs {
  const telephoneEvents: TelephoneEvent[] = [{ pt: TELEPHONE_EVENT_PT_8K, clockRate: 8000 }];
  if (codecs.includes('opus')) telephoneEvents.push({ pt: TELEPHONE_EVENT_PT_48K, clockRate: 48000 });
  return { codecs: codecs.map((n) => choice(n, CODECS[n].defaultPt)), telephoneEvents };
}

/** rtpmap fields for writing (opus/48000/2, others name/rate). */
export function rtpmapOf(c: CodecChoice): { payload: number; codec: string; rate: number; encoding?: number } {
  const info = CODECS[c.name];
  return info.channels > 1
    ? { payload: c.pt, codec: info.encoding, rate: info.clockRate, encoding: info.channels }
    : { payload: c.pt, codec: info.encoding, rate: info.clockRate };
}
