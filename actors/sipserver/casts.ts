/**
 * The SIP server's casts to its gateways, gathered for one turn of the event loop: every event
 * for a gateway made while the loop handles a burst of datagrams goes as one `sip.events`
 * message (a single one as itself). Each message between threads is a structured clone and a
 * wake-up of the other thread, ~12 % of the SIP server's thread at 500 calls/s
 * (docs/gateway.md "Calls per second"); a busy server sends several events a turn. The events
 * are built for the send and handed over (SendOptions.handover): a gateway on the SIP server's
 * own thread gets them without a structured clone, so nothing in them may be the core's own
 * (core.ts copies the request's headers and source into each).
 *
 * Order: events keep their order per gateway. A reply to a gateway's request must not overtake
 * an event made before it (the `sip.dialogEnded` of a BYE the gateway sent comes before the
 * BYE's answer, as when every event was sent at once): the actor flushes before it replies.
 */
import type { SipServerCast, SipServerEvent } from './gateway-messages.js';

export class CastBatcher {
  private readonly queued = new Map<string, SipServerEvent[]>();
  private immediate: NodeJS.Immediate | null = null;

  constructor(private readonly send: (gateway: string, cast: SipServerCast) => void) {}

  cast(gateway: string, event: SipServerEvent): void {
    const q = this.queued.get(gateway);
    if (q) q.push(event);
    else this.queued.set(gateway, [event]);
    this.immediate ??= setImmediate(() => this.flush());
  }

  /** Send what is queued now. */
  flush(): void {
    if (this.immediate) clearImmediate(this.immediate);
    this.immediate = null;
    if (this.queued.size === 0) return;
    const all = [...this.queued];
    this.queued.clear();
    for (const [gateway, events] of all) this.send(gateway, events.length === 1 ? events[0]! : { type: 'sip.events', events });
  }
}
