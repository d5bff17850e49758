/** What supervisors report, as plain data (an rxjs stream on the ActorSystem). */
export type SupervisionEvent =
  | { type: 'child-started'; supervisor: string; id: string; at: number }
  | { type: 'child-crashed'; supervisor: string; id: string; cause: string; message: string; at: number }
  | { type: 'child-restarting'; supervisor: string; id: string; attempt: number; delayMs: number; at: number }
  | { type: 'child-restarted'; supervisor: string; id: string; attempt: number; at: number }
  | { type: 'child-stopped'; supervisor: string; id: string; clean: boolean; ms: number; at: number }
  | { type: 'escalated'; supervisor: string; reason: string; at: number }
  | { type: 'supervisor-stopped'; supervisor: string; at: number }
  | { type: 'root-failed'; reason: string; at: number };
