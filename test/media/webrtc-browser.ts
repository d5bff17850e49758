/**
 * Headless Chromium as a WebRTC peer for the WebRTC endpoint tests: one browser per test file
 * (playwright-core on Debian's /usr/bin/chromium), pages served from a loopback HTTP server of
 * the test, and page-side helpers: an RTCPeerConnection whose audio is a WebAudio oscillator and
 * whose received audio goes to an AnalyserNode. Nothing is fetched from the internet.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext, TestFn } from 'ava';
import { chromium, type Browser, type Page } from 'playwright-core';

const PAGE = `<!doctype html><meta charset="utf-8"><title>hostd webrtc peer</title><script>
window.peer = {
  async open(o) {
    const ctx = new AudioContext({ sampleRate: 48000 });
    await ctx.resume();
    const osc = ctx.createOscillator();
    osc.frequency.value = o.freq;
    const gain = ctx.createGain();
    gain.gain.value = 0.3;
    const dest = ctx.createMediaStreamDestination();
    osc.connect(gain).connect(dest);
    osc.start();
    const pc = new RTCPeerConnection({ iceServers: [] });
    const sender = pc.addTrack(dest.stream.getAudioTracks()[0], dest.stream);
    this.pc = pc; this.ctx = ctx; this.osc = osc; this.sender = sender;
    this.states = [];
    pc.onconnectionstatechange = () => this.states.push(pc.connectionState);
    pc.ontrack = (e) => {
      const stream = new MediaStream([e.track]);
      // Chromium plays a remote track into WebAudio only while a media element holds it.
      const el = new Audio(); el.muted = true; el.srcObject = stream; el.play().catch(() => {});
      this.audioEl = el;
      const src = ctx.createMediaStreamSource(stream);
      const an = ctx.createAnalyser(); an.fftSize = 8192; an.smoothingTimeConstant = 0;
      src.connect(an);
      this.analyser = an;
    };
  },
  async waitIce() {
    if (this.pc.iceGatheringState === 'complete') return;
    await new Promise((r) => { const t = setTimeout(r, 3000); this.pc.addEventListener('icegatheringstatechange', () => { if (this.pc.iceGatheringState === 'complete') { clearTimeout(t); r(); } }); });
  },
  async offer(restart) {
    const o = await this.pc.createOffer({ iceRestart: !!restart });
    await this.pc.setLocalDescription(o);
    await this.waitIce();
    return this.pc.localDescription.sdp;
  },
  async answer(sdp) {
    await this.pc.setRemoteDescription({ type: 'offer', sdp });
    await this.pc.setLocalDescription(await this.pc.createAnswer());
    await this.waitIce();
    return this.pc.localDescription.sdp;
  },
  async accept(sdp) { await this.pc.setRemoteDescription({ type: 'answer', sdp }); },
  /** The loudest frequency the analyser hears, and its level in dB (-Infinity: silence). */
  peak() {
    if (!this.analyser) return { freq: 0, db: -Infinity };
    const a = this.analyser; const bins = new Float32Array(a.frequencyBinCount); a.getFloatFrequencyData(bins);
    let best = 1; for (let i = 2; i < bins.length; i++) if (bins[i] > bins[best]) best = i;
    return { freq: best * this.ctx.sampleRate / a.fftSize, db: bins[best] };
  },
  async inbound() {
    const stats = await this.pc.getStats(); let n = 0;
    stats.forEach((s) => { if (s.type === 'inbound-rtp' && s.kind === 'audio') n += s.packetsReceived; });
    return n;
  },
  state() { return this.pc.connectionState; },
  async statsDump() { const out = []; (await this.pc.getStats()).forEach((s) => { if (s.type === 'inbound-rtp' || s.type === 'candidate-pair') out.push({ type: s.type, ssrc: s.ssrc, n: s.packetsReceived, state: s.state, nominated: s.nominated, br: s.bytesReceived }); }); return out; },
  close() { this.pc.close(); },
};
</script>`;

export interface Browser1 {
  browser: Browser;
  url: string;
  page(): Promise<Page>;
}

/** One Chromium and one loopback page server for the whole test file; closed by `after`. */
export async function launchBrowser(): Promise<Browser1 & { close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'],
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    browser,
    url,
    async page() {
      const p = await browser.newPage();
      await p.goto(url);
      return p;
    },
    async close() {
      await browser.close().catch(() => undefined);
      server.close();
    },
  };
}

/** A page with its peer opened (oscillator at `freq`), closed when the test ends. */
export async function peerPage(t: ExecutionContext, b: Browser1, freq: number): Promise<Page> {
  const page = await b.page();
  t.teardown(() => page.close().catch(() => undefined));
  await page.evaluate((f) => (globalThis as any).peer.open({ freq: f }), freq);
  return page;
}

/** Poll `fn` until it returns a truthy value or `ms` pass; the last value either way. */
export async function until<T>(fn: () => Promise<T>, ms: number, every = 100): Promise<T> {
  const end = Date.now() + ms;
  let v = await fn();
  while (!v && Date.now() < end) {
    await new Promise((r) => setTimeout(r, every));
    v = await fn();
  }
  return v;
}

/** One browser for a test file: launched before its tests, closed after them (even on failure). */
export function browserForFile(test: TestFn): () => Browser1 {
  let b: (Browser1 & { close(): Promise<void> }) | undefined;
  test.before(async () => {
    b = await launchBrowser();
  });
  test.after.always(async () => {
    await b?.close();
  });
  return () => b!;
}

/** The page-side peer's calls, typed. */
export const peerOf = (page: Page) => ({
  offer: (restart = false) => page.evaluate((r) => (globalThis as any).peer.offer(r) as Promise<string>, restart),
  answer: (sdp: string) => page.evaluate((s) => (globalThis as any).peer.answer(s) as Promise<string>, sdp),
  accept: (sdp: string) => page.evaluate((s) => (globalThis as any).peer.accept(s) as Promise<void>, sdp),
  inbound: () => page.evaluate(() => (globalThis as any).peer.inbound() as Promise<number>),
  peak: () => page.evaluate(() => (globalThis as any).peer.peak() as { freq: number; db: number }),
  state: () => page.evaluate(() => (globalThis as any).peer.state() as string),
});

/** At least `n` more packets reach the page within `ms` (audio flows). */
export async function flowing(page: Page, n = 25, ms = 8000): Promise<boolean> {
  const start = await peerOf(page).inbound();
  return Boolean(await until(async () => (await peerOf(page).inbound()) - start >= n, ms, 200));
}

/** The page's analyser hears `freq` (±30 Hz) clearly within `ms`: the peak, or null. */
export async function hears(page: Page, freq: number, ms = 10_000) {
  return until(async () => {
    const p = await peerOf(page).peak();
    return Math.abs(p.freq - freq) <= 30 && p.db > -70 ? p : null;
  }, ms, 200);
}
