/**
 * ITU-T G.722 sub-band ADPCM at 64 kbit/s (mode 1): 16 kHz 16-bit PCM ⇄ one byte per two samples
 * (a 20 ms frame is 320 samples ⇄ 160 bytes; the RTP clock is nevertheless 8000 Hz).
 *
 * Decisions:
 * - Written from the Recommendation's block diagrams with the integer arithmetic of the ITU
 *   reference implementation (saturating 16-bit adds, arithmetic shifts), so the bytes equal
 *   other conforming encoders' (checked against ffmpeg's in test/media/g722-ffmpeg.test.ts).
 *   Byte layout: bits 7-6 the high-band code, bits 5-0 the low-band code.
 * - The QMF takes and gives full 16-bit PCM (the reference's 14-bit interface scaled by 4, as
 *   ffmpeg and spandsp do). Encoder + decoder delay: 22 samples (1.4 ms), the two 24-tap QMFs.
 * - State is plain data (`G722State`): snapshot() copies it out, restore() validates and copies it
 *   in, so a stream can move between threads mid-call.
 * - Input must hold whole sample pairs: an odd number of samples is a RangeError (the codec works
 *   on pairs and a frame API should not hide a half pair). Empty input gives empty output.
 */
import { IHN, IHP, ILB, ILN, ILP, QM2, QM4, QM6, QMF, Q6, RH2, RL42, WH, WL } from './g722-tables.js';

/** State of one sub-band's adaptive predictor and quantiser scale. */
export interface G722BandState {
  s: number;
  sp: number;
  sz: number;
  nb: number;
  det: number;
  r: number[];
  a: number[];
  ap: number[];
  p: number[];
  d: number[];
  b: number[];
  bp: number[];
}

/** Plain-data state of an encoder or decoder: the two bands and the QMF delay line. */
export interface G722State {
  band: [G722BandState, G722BandState];
  qmf: number[];
}

const t = (a: Int16Array, i: number): number => a[i] as number;

function sat(x: number): number {
  return x > 32767 ? 32767 : x < -32768 ? -32768 : x;
}

class Band {
  s = 0;
  sp = 0;
  sz = 0;
  nb = 0;
  det: number;
  readonly r = new Int32Array(3);
  readonly a = new Int32Array(3);
  readonly ap = new Int32Array(3);
  readonly p = new Int32Array(3);
  readonly d = new Int32Array(7);
  readonly b = new Int32Array(7);
  readonly bp = new Int32Array(7);

  constructor(det: number) {
    this.det = det;
  }

  /** Blocks 4L/4H: reconstruction, pole and zero adaptation, prediction. */
  adapt(dx: number): void {
    const { r, a, ap, p, d, b, bp } = this;
    // RECONS, PARREC
    d[0] = dx;
    r[0] = sat(this.s + dx);
    p[0] = sat(this.sz + dx);
    // UPPOL2
    const sg0 = (p[0] as number) >> 15;
    const sg1 = (p[1] as number) >> 15;
    const sg2 = (p[2] as number) >> 15;
    let wd1 = sat((a[1] as number) * 4);
    let wd2 = sg0 === sg1 ? sat(-wd1) : wd1;
    let wd3 = (sg0 === sg2 ? 128 : -128) + (wd2 >> 7) + (((a[2] as number) * 32512) >> 15);
    ap[2] = wd3 > 12288 ? 12288 : wd3 < -12288 ? -12288 : wd3;
    // UPPOL1
    wd1 = sg0 === sg1 ? 192 : -192;
    wd2 = ((a[1] as number) * 32640) >> 15;
    let ap1 = sat(wd1 + wd2);
    wd3 = sat(15360 - (ap[2] as number));
    if (ap1 > wd3) ap1 = wd3;
    else if (ap1 < -wd3) ap1 = -wd3;
    ap[1] = ap1;
    // UPZERO
    wd1 = dx === 0 ? 0 : 128;
    const sgx = dx >> 15;
    for (let i = 1; i < 7; i++) {
      wd2 = (d[i] as number) >> 15 === sgx ? wd1 : -wd1;
      bp[i] = sat(wd2 + (((b[i] as number) * 32640) >> 15));
    }
    // DELAYZ, DELAYA
    for (let i = 6; i > 0; i--) {
      d[i] = d[i - 1] as number;
      b[i] = bp[i] as number;
    }
    for (let i = 2; i > 0; i--) {
      r[i] = r[i - 1] as number;
      p[i] = p[i - 1] as number;
      a[i] = ap[i] as number;
    }
    // FILTEP
    wd1 = ((a[1] as number) * sat(2 * (r[1] as number))) >> 15;
    wd2 = ((a[2] as number) * sat(2 * (r[2] as number))) >> 15;
    this.sp = sat(wd1 + wd2);
    // FILTEZ
    let sz = 0;
    for (let i = 6; i > 0; i--) sz += ((b[i] as number) * sat(2 * (d[i] as number))) >> 15;
    this.sz = sat(sz);
    // PREDIC
    this.s = sat(this.sp + this.sz);
  }

  /** LOGSCL/SCALEL (low band: limit 18432, shift 8) or LOGSCH/SCALEH (22528, 10). */
  scale(increment: number, limit: number, shift: number): void {
    let nb = ((this.nb * 127) >> 7) + increment;
    nb = nb < 0 ? 0 : nb > limit ? limit : nb;
    this.nb = nb;
    const wd1 = (nb >> 6) & 31;
    const wd2 = shift - (nb >> 11);
    const wd3 = wd2 < 0 ? t(ILB, wd1) << -wd2 : t(ILB, wd1) >> wd2;
    this.det = wd3 << 2;
  }

  snapshot(): G722BandState {
    const { s, sp, sz, nb, det } = this;
    const arr = (x: Int32Array): number[] => Array.from(x);
    return { s, sp, sz, nb, det, r: arr(this.r), a: arr(this.a), ap: arr(this.ap), p: arr(this.p), d: arr(this.d), b: arr(this.b), bp: arr(this.bp) };
  }

  static restore(st: unknown, nbLimit: number): Band {
    if (typeof st !== 'object' || st === null) throw new TypeError('G722 band state must be an object');
    const o = st as Record<string, unknown>;
    const int = (k: string, lo: number, hi: number): number => {
      const v = o[k];
      if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) throw new TypeError(`G722 band state: bad ${k}`);
      return v;
    };
    const band = new Band(int('det', 0, 65535));
    band.s = int('s', -32768, 32767);
    band.sp = int('sp', -32768, 32767);
    band.sz = int('sz', -32768, 32767);
    band.nb = int('nb', 0, nbLimit);
    for (const k of ['r', 'a', 'ap', 'p', 'd', 'b', 'bp'] as const) {
      const v = o[k];
      const dst = band[k];
      if (!Array.isArray(v) || v.length !== dst.length) throw new TypeError(`G722 band state: bad ${k}`);
      v.forEach((x: unknown, i) => {
        if (typeof x !== 'number' || !Number.isInteger(x) || x < -32768 || x > 32767) throw new TypeError(`G722 band state: bad ${k}[${i}]`);
        dst[i] = x;
      });
    }
    return band;
  }
}

const LOW_NB_LIMIT = 18432;
const HIGH_NB_LIMIT = 22528;

function restoreParts(s: unknown): { low: Band; high: Band; qmf: Int32Array } {
  if (typeof s !== 'object' || s === null) throw new TypeError('G722 state must be an object');
  const o = s as { band?: unknown; qmf?: unknown };
  if (!Array.isArray(o.band) || o.band.length !== 2) throw new TypeError('G722 state: band must be a pair');
  if (!Array.isArray(o.qmf) || o.qmf.length !== 24 || !o.qmf.every((x) => typeof x === 'number' && Number.isInteger(x) && Math.abs(x) <= 65536)) {
    throw new TypeError('G722 state: qmf must be 24 integers');
  }
  return { low: Band.restore(o.band[0], LOW_NB_LIMIT), high: Band.restore(o.band[1], HIGH_NB_LIMIT), qmf: Int32Array.from(o.qmf as number[]) };
}

function snapshotOf(low: Band, high: Band, qmf: Int32Array): G722State {
  return { band: [low.snapshot(), high.snapshot()], qmf: Array.from(qmf) };
}

/** Streaming G.722 encoder: 2 samples (16 kHz) in, 1 byte out. */
export class G722Encoder {
  private low = new Band(32);
  private high = new Band(8);
  /** QMF delay line, oldest first. */
  private qmf = new Int32Array(24);

  /** Encodes an even number of samples (320 per 20 ms); `out` must hold pcm.length / 2 bytes. */
  encode(pcm16k: Int16Array, out?: Uint8Array): Uint8Array {
    if (pcm16k.length % 2 !== 0) throw new RangeError(`G.722 encodes sample pairs; got ${pcm16k.length} samples`);
    const n = pcm16k.length / 2;
    if (out !== undefined && out.length < n) throw new RangeError(`output array too short: ${out.length} < ${n}`);
    const o = out === undefined ? new Uint8Array(n) : out.length === n ? out : out.subarray(0, n);
    const { low, high, qmf: x } = this;
    for (let j = 0; j < n; j++) {
      // Transmit QMF: shift in two samples, keep one low-band and one high-band sample.
      x.copyWithin(0, 2);
      x[22] = pcm16k[2 * j] as number;
      x[23] = pcm16k[2 * j + 1] as number;
      let sumOdd = 0;
      let sumEven = 0;
      for (let i = 0; i < 12; i++) {
        sumOdd += (x[2 * i] as number) * t(QMF, i);
        sumEven += (x[2 * i + 1] as number) * t(QMF, 11 - i);
      }
      const xlow = (sumEven + sumOdd) >> 14;
      const xhigh = (sumEven - sumOdd) >> 14;

      // Low band: SUBTRA, QUANTL, INVQAL, LOGSCL, SCALEL, adaptation.
      const el = sat(xlow - low.s);
      let wd = el >= 0 ? el : -(el + 1);
      let i = 1;
      for (; i < 30; i++) if (wd < (t(Q6, i) * low.det) >> 12) break;
      const ilow = el < 0 ? t(ILN, i) : t(ILP, i);
      const ril = ilow >> 2;
      const dlow = (low.det * t(QM4, ril)) >> 15;
      low.scale(t(WL, t(RL42, ril)), LOW_NB_LIMIT, 8);
      low.adapt(dlow);

      // High band: SUBTRA, QUANTH, INVQAH, LOGSCH, SCALEH, adaptation.
      const eh = sat(xhigh - high.s);
      wd = eh >= 0 ? eh : -(eh + 1);
      const mih = wd >= (564 * high.det) >> 12 ? 2 : 1;
      const ihigh = eh < 0 ? t(IHN, mih) : t(IHP, mih);
      const dhigh = (high.det * t(QM2, ihigh)) >> 15;
      high.scale(t(WH, t(RH2, ihigh)), HIGH_NB_LIMIT, 10);
      high.adapt(dhigh);

      o[j] = (ihigh << 6) | ilow;
    }
    return o;
  }

  snapshot(): G722State {
    return snapshotOf(this.low, this.high, this.qmf);
  }

  static restore(s: G722State): G722Encoder {
    const parts = restoreParts(s);
    const e = new G722Encoder();
    Object.assign(e, parts);
    return e;
  }
}

/** Streaming G.722 decoder: 1 byte in, 2 samples (16 kHz) out. */
export class G722Decoder {
  private low = new Band(32);
  private high = new Band(8);
  private qmf = new Int32Array(24);

  /** Decodes any number of bytes; `out` must hold 2 × b.length samples. */
  decode(b: Uint8Array, out?: Int16Array): Int16Array {
    const n = b.length * 2;
    if (out !== undefined && out.length < n) throw new RangeError(`output array too short: ${out.length} < ${n}`);
    const o = out === undefined ? new Int16Array(n) : out.length === n ? out : out.subarray(0, n);
    const { low, high, qmf: x } = this;
    for (let j = 0; j < b.length; j++) {
      const code = b[j] as number;
      const ilow = code & 0x3f;
      const ihigh = code >> 6;

      // Low band: INVQBL (6 bits) for the output, INVQAL (4 bits) for the adaptation.
      let rlow = low.s + ((low.det * t(QM6, ilow)) >> 15);
      rlow = rlow > 16383 ? 16383 : rlow < -16384 ? -16384 : rlow;
      const ril = ilow >> 2;
      const dlow = (low.det * t(QM4, ril)) >> 15;
      low.scale(t(WL, t(RL42, ril)), LOW_NB_LIMIT, 8);
      low.adapt(dlow);

      // High band.
      const dhigh = (high.det * t(QM2, ihigh)) >> 15;
      let rhigh = dhigh + high.s;
      rhigh = rhigh > 16383 ? 16383 : rhigh < -16384 ? -16384 : rhigh;
      high.scale(t(WH, t(RH2, ihigh)), HIGH_NB_LIMIT, 10);
      high.adapt(dhigh);

      // Receive QMF.
      x.copyWithin(0, 2);
      x[22] = rlow + rhigh;
      x[23] = rlow - rhigh;
      let out1 = 0;
      let out2 = 0;
      for (let i = 0; i < 12; i++) {
        out2 += (x[2 * i] as number) * t(QMF, i);
        out1 += (x[2 * i + 1] as number) * t(QMF, 11 - i);
      }
      o[2 * j] = sat(out1 >> 11);
      o[2 * j + 1] = sat(out2 >> 11);
    }
    return o;
  }

  snapshot(): G722State {
    return snapshotOf(this.low, this.high, this.qmf);
  }

  static restore(s: G722State): G722Decoder {
    const parts = restoreParts(s);
    const d = new G722Decoder();
    Object.assign(d, parts);
    return d;
  }
}
