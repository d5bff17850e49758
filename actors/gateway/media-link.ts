/**
 * The seam between the gateway's control connections and media proxying.
 *
 * The gateway actor owns control connections (who owns what); the media link owns the media sessions
 * those connections create on the media bridges (GATEWAY_MEDIA_BACKENDS). The gateway sends every
 * method of protocols/media/commands.ts it receives on /control to `command(owner, method, params)`,
 * where `owner` is the control connection's id; a refusal is a thrown error carrying `.code` and
 * `.message`, put in the envelope as is. Events of an owner's sessions come back through
 * `events.event(owner, name, data)` and go out on that owner's connection.
 *
 * This file is the agreed interface (the implementation lives in actors/gateway/media/**).
 */
export interface MediaLinkEvents { event(owner: string, name: string, data: unknown): void }
export interface MediaLink {
  /** session.create {callId?} and every Document-2 command on a session the owner owns. */
  command(owner: string, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** The owner's connection closed: destroy every session it owns. */
  releaseOwner(owner: string): Promise<void>;
  sessionsOf(owner: string): number;
  close(): Promise<void>;
}
export type MediaLinkFactory = (opts: { backends: string[]; token?: string; log: import('pino').Logger; events: MediaLinkEvents }) => MediaLink;
