/** How the pages write numbers, sizes, times and durations. */

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];

/** Bytes in decimal units (the spec's GB is 10⁹), three significant digits. */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  let i = 0;
  let v = n;
  while (v >= 1000 && i < UNITS.length - 1) {
    v /= 1000;
    i++;
  }
  return `${i === 0 ? v : v.toPrecision(3)} ${UNITS[i]}`;
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}

export function percent(part: number, whole: number): number {
  return whole > 0 ? Math.min(100, Math.max(0, (part / whole) * 100)) : 0;
}

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** A time (ISO string or epoch ms) as local date and time, to the second. */
export function when(t: string | number | null | undefined): string {
  if (t === null || t === undefined) return '–';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleString('en-GB', { dateStyle: 'short', timeStyle: 'medium' });
}

/** Seconds until done at the rate seen so far, or null before there is a rate. */
export function eta(done: number, left: number, startedAt: string | null, now = Date.now()): number | null {
  if (!startedAt || done <= 0) return null;
  const elapsed = (now - new Date(startedAt).getTime()) / 1000;
  return elapsed > 0 ? (left * elapsed) / done : null;
}
