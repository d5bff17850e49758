/** Which stripe coder a new PUT is pinned to: the coders in turn. */
import type { ActorRef } from '../../../runtime/index.js';
import { stripeCoderId, type StripeCoderProtocol } from '../../stripe-coder/messages.js';

export function coders(count: number, ref: (id: string) => ActorRef<StripeCoderProtocol>): () => ActorRef<StripeCoderProtocol> {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`stripe coders: need at least one, got ${String(count)}`);
  const refs = Array.from({ length: count }, (_, n) => ref(stripeCoderId(n)));
  let next = 0;
  return () => refs[next++ % refs.length]!;
}
