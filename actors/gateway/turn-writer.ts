/**
 * Frames for one WebSocket gathered over a turn of the event loop and written together: a
 * control connection's frames sent while the gateway handles a burst of SIP events (a
 * `sip.invite` request, call events) go out in one corked write at the end of the turn, in the
 * order they were sent, instead of one write each.
 */
export class TurnWriter {
  private texts: string[] = [];
  private immediate: NodeJS.Immediate | null = null;
  private dropped = false;

  constructor(private readonly write: (texts: string[]) => void) {}

  push(text: string): void {
    if (this.dropped) return;
    this.texts.push(text);
    this.immediate ??= setImmediate(() => this.flush());
  }

  /** Write what is gathered now (before a close, so the close frame comes after them). */
  flush(): void {
    if (this.immediate) clearImmediate(this.immediate);
    this.immediate = null;
    if (this.dropped || this.texts.length === 0) return;
    const texts = this.texts;
    this.texts = [];
    this.write(texts);
  }

  /** The socket is gone: forget what was gathered, take nothing more. */
  drop(): void {
    if (this.immediate) clearImmediate(this.immediate);
    this.immediate = null;
    this.dropped = true;
    this.texts = [];
  }
}
