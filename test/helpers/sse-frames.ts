/** Server-Sent Events as the deployer's tests read them: complete frames cut off a text buffer. */

export interface SseFrame {
  id: string;
  event: string;
  data: any;
}

/** The complete frames at the start of `buf` (fields joined per the SSE rules), and the rest. */
export function takeFrames(buf: string): { frames: SseFrame[]; rest: string } {
  const frames: SseFrame[] = [];
  let i: number;
  while ((i = buf.indexOf('\n\n')) >= 0) {
    const block = buf.slice(0, i);
    buf = buf.slice(i + 2);
    const f: Record<string, string> = {};
    for (const line of block.split('\n')) {
      const m = /^(\w+): ?(.*)$/.exec(line);
      if (m) f[m[1] as string] = f[m[1] as string] === undefined ? (m[2] as string) : `${f[m[1] as string]}\n${m[2]}`;
    }
    if (f.data !== undefined) frames.push({ id: f.id as string, event: f.event as string, data: JSON.parse(f.data) });
  }
  return { frames, rest: buf };
}
