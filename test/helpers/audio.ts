/**
 * Audio measurement for tests: levels, the frequency of a signal, the power at one frequency,
 * distortion against a fitted sine, delay by cross-correlation, and test signals; plus s16le
 * conversion and a guarded ffmpeg runner. Generic: any test that ends with PCM (e.g. RTP →
 * decoder → PCM) can check it with these. All PCM is mono Int16Array.
 *
 * Conventions: levels in dBFS take a full-scale sine (peak 32767) as 0 dBFS; "power" is a mean
 * square in sample units², so a sine of peak A has power A²/2.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';

const FULL_SCALE_POWER = (32767 * 32767) / 2;

/** Root mean square of the samples (0 for an empty array). */
export function rms(pcm: ArrayLike<number>): number {
  if (pcm.length === 0) return 0;
  let s = 0;
  for (let i = 0; i < pcm.length; i++) s += (pcm[i] as number) ** 2;
  return Math.sqrt(s / pcm.length);
}

/** Level in dBFS (−Infinity for digital silence). */
export function dbfs(pcm: ArrayLike<number>): number {
  return 10 * Math.log10(rms(pcm) ** 2 / FULL_SCALE_POWER);
}

/** Power ratio in dB. */
export function db(power: number, reference: number): number {
  return 10 * Math.log10(power / reference);
}

/**
 * Power of the component at `freq` (Goertzel over the whole array, no window): a sine of peak A
 * at `freq` gives A²/2 when the array holds a whole number of its periods (close to it otherwise).
 */
export function goertzelPower(pcm: ArrayLike<number>, sampleRate: number, freq: number): number {
  const n = pcm.length;
  if (n === 0) return 0;
  const w = (2 * Math.PI * freq) / sampleRate;
  const coeff = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    const s0 = (pcm[i] as number) + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const re = s1 - s2 * Math.cos(w);
  const im = s2 * Math.sin(w);
  return (2 * (re * re + im * im)) / (n * n);
}

/** In-place radix-2 complex FFT (length a power of two). */
function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j] as number, re[i] as number];
      [im[i], im[j]] = [im[j] as number, im[i] as number];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const ang = (-2 * Math.PI) / len;
    const wr = Math.cos(ang);
    const wi = Math.sin(ang);
    for (let i = 0; i < n; i += len) {
      let cr = 1;
      let ci = 0;
      for (let k = 0; k < len / 2; k++) {
        const a = i + k;
        const b = a + len / 2;
        const xr = (re[b] as number) * cr - (im[b] as number) * ci;
        const xi = (re[b] as number) * ci + (im[b] as number) * cr;
        re[b] = (re[a] as number) - xr;
        im[b] = (im[a] as number) - xi;
        re[a] = (re[a] as number) + xr;
        im[a] = (im[a] as number) + xi;
        const t = cr * wr - ci * wi;
        ci = cr * wi + ci * wr;
        cr = t;
      }
    }
  }
}

/** Magnitude spectrum (Hann window, zero-padded to a power of two ≥ 2·length). Bin i is i·rate/size. */
export function spectrum(pcm: ArrayLike<number>): { mags: Float64Array; size: number } {
  let size = 2;
  while (size < 2 * pcm.length) size <<= 1;
  const re = new Float64Array(size);
  const im = new Float64Array(size);
  const n = pcm.length;
  for (let i = 0; i < n; i++) re[i] = (pcm[i] as number) * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / Math.max(1, n - 1)));
  fft(re, im);
  const mags = new Float64Array(size / 2 + 1);
  for (let i = 0; i < mags.length; i++) mags[i] = Math.hypot(re[i] as number, im[i] as number);
  return { mags, size };
}

/**
 * Frequency (Hz) of the strongest spectral peak above DC, refined by parabolic interpolation of
 * the log magnitude; 0 for silence. Accurate to a small fraction of rate / length.
 */
export function dominantFrequency(pcm: Int16Array, sampleRate: number): number {
  if (rms(pcm) === 0) return 0;
  const { mags, size } = spectrum(pcm);
  let best = 1;
  for (let i = 2; i < mags.length - 1; i++) if ((mags[i] as number) > (mags[best] as number)) best = i;
  const a = Math.log((mags[best - 1] as number) + 1e-12);
  const b = Math.log((mags[best] as number) + 1e-12);
  const c = Math.log((mags[best + 1] as number) + 1e-12);
  const denom = a - 2 * b + c;
  const offset = denom === 0 ? 0 : (0.5 * (a - c)) / denom;
  return ((best + offset) * sampleRate) / size;
}

/**
 * Least-squares fit of DC + amplitude·sin(2π·freq·i/rate + phase) to the samples (i from 0);
 * also the power of what is left (harmonics, noise, other tones) and THD+N in dB, i.e.
 * 10·log10(residual / sine power).
 */
export function sineFit(
  pcm: ArrayLike<number>,
  sampleRate: number,
  freq: number,
): { amplitude: number; phase: number; residualPower: number; thdnDb: number } {
  const n = pcm.length;
  const w = (2 * Math.PI * freq) / sampleRate;
  // Normal equations for [cos, sin, 1].
  const m = [
    [0, 0, 0],
    [0, 0, 0],
    [0, 0, 0],
  ];
  const v = [0, 0, 0];
  for (let i = 0; i < n; i++) {
    const basis = [Math.cos(w * i), Math.sin(w * i), 1];
    const x = pcm[i] as number;
    for (let r = 0; r < 3; r++) {
      v[r]! += (basis[r] as number) * x;
      for (let c = 0; c < 3; c++) m[r]![c]! += (basis[r] as number) * (basis[c] as number);
    }
  }
  const [a, b, dc] = solve3(m, v);
  let residual = 0;
  for (let i = 0; i < n; i++) residual += ((pcm[i] as number) - (a * Math.cos(w * i) + b * Math.sin(w * i) + dc)) ** 2;
  residual /= n;
  const amplitude = Math.hypot(a, b);
  return { amplitude, phase: Math.atan2(a, b), residualPower: residual, thdnDb: 10 * Math.log10(residual / ((amplitude * amplitude) / 2)) };
}

function solve3(m: number[][], v: number[]): [number, number, number] {
  const a = m.map((row, i) => [...row, v[i] as number]);
  for (let col = 0; col < 3; col++) {
    let piv = col;
    for (let r = col + 1; r < 3; r++) if (Math.abs(a[r]![col]!) > Math.abs(a[piv]![col]!)) piv = r;
    [a[col], a[piv]] = [a[piv]!, a[col]!];
    for (let r = 0; r < 3; r++) {
      if (r === col) continue;
      const f = a[r]![col]! / a[col]![col]!;
      for (let c = col; c < 4; c++) a[r]![c]! -= f * a[col]![c]!;
    }
  }
  return [a[0]![3]! / a[0]![0]!, a[1]![3]! / a[1]![1]!, a[2]![3]! / a[2]![2]!];
}

/** The lag in [minLag, maxLag] at which `sig[i + lag]` best matches `ref[i]` (normalised cross-correlation). */
export function bestLag(ref: ArrayLike<number>, sig: ArrayLike<number>, maxLag: number, minLag = 0): number {
  let best = minLag;
  let bestScore = -Infinity;
  for (let lag = minLag; lag <= maxLag; lag++) {
    let xy = 0;
    let yy = 0;
    for (let i = Math.max(0, -lag); i < ref.length && i + lag < sig.length; i++) {
      const y = sig[i + lag] as number;
      xy += (ref[i] as number) * y;
      yy += y * y;
    }
    const score = yy > 0 ? xy / Math.sqrt(yy) : -Infinity;
    if (score > bestScore) {
      bestScore = score;
      best = lag;
    }
  }
  return best;
}

/** SNR (dB) of `sig` against `ref`, comparing ref[i] with sig[i + lag] for i ≥ skip. */
export function snrDb(ref: ArrayLike<number>, sig: ArrayLike<number>, lag = 0, skip = 0): number {
  let s = 0;
  let e = 0;
  for (let i = skip; i < ref.length && i + lag < sig.length; i++) {
    const r = ref[i] as number;
    s += r * r;
    e += (r - (sig[i + lag] as number)) ** 2;
  }
  return 10 * Math.log10(s / e);
}

/** A sine of peak `amplitude`, `samples` long, starting at `phase` radians. */
export function sine(sampleRate: number, freq: number, samples: number, amplitude = 16384, phase = 0): Int16Array {
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * freq * i) / sampleRate + phase));
  return out;
}

/** A linear sweep from f0 to f1 Hz over `samples`, peak `amplitude`. */
export function sweep(sampleRate: number, f0: number, f1: number, samples: number, amplitude = 16384): Int16Array {
  const out = new Int16Array(samples);
  const dur = samples / sampleRate;
  for (let i = 0; i < samples; i++) {
    const t = i / sampleRate;
    out[i] = Math.round(amplitude * Math.sin(2 * Math.PI * (f0 * t + ((f1 - f0) / (2 * dur)) * t * t)));
  }
  return out;
}

/** Sample-wise sum, clamped to 16 bits. */
export function mix(...parts: Int16Array[]): Int16Array {
  const n = Math.max(0, ...parts.map((p) => p.length));
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    let v = 0;
    for (const p of parts) v += p[i] ?? 0;
    out[i] = Math.max(-32768, Math.min(32767, v));
  }
  return out;
}

/** PCM as s16le bytes. */
export function toS16le(pcm: Int16Array): Buffer {
  const b = Buffer.alloc(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) b.writeInt16LE(pcm[i] as number, i * 2);
  return b;
}

/** s16le bytes as PCM (a trailing odd byte is ignored). */
export function fromS16le(b: Uint8Array): Int16Array {
  const out = new Int16Array(b.length >> 1);
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

/** A temporary directory removed when the test ends, pass or fail. */
export function audioTempDir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-audio-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Runs ffmpeg (quiet, no stdin) with `args`; resolves on exit 0, rejects with its stderr
 * otherwise or after `timeoutMs`. The process is killed when the test ends, pass or fail.
 */
export function ffmpeg(t: ExecutionContext, args: string[], timeoutMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const kill = (): void => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    t.teardown(kill);
    const timer = setTimeout(() => {
      kill();
      reject(new Error(`ffmpeg timed out after ${timeoutMs} ms: ${args.join(' ')}`));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`ffmpeg exited ${code ?? signal}: ${stderr.trim()} (${args.join(' ')})`));
    });
  });
}
