/**
 * The deployment service's HTTP front on uWS: one route table (admin.ts, and the CI endpoints as
 * they land), an unknown path 404 and a known path with another method 405 with `Allow`, both as
 * JSON errors. Request headers are read before the handler returns (uWS's request object does not
 * outlive it) and a JSON body starts being read at once, capped at `maxBodyBytes`; a request with a
 * body that is refused closes its connection (the rest of the body may still be on its way).
 */
import { Router } from '../../../runtime/http/router.js';
import type { HttpRequest, HttpResponse } from '../../../runtime/http/uws.js';
import { adminRoutes } from './admin.js';
import { deployRoutes } from './deploy.js';
import { eventRoutes } from './events.js';
import { currentRoutes } from './current.js';
import type { Call, Service } from './call.js';
import { readBody, reply, sendFailure, sendRefusal } from './respond.js';

const router = new Router<Call, Promise<void> | void>([...adminRoutes, ...deployRoutes, ...eventRoutes, ...currentRoutes]);

/** Routes whose body is not a small JSON document (the deploy upload streams its own). */
const STREAMED = new Set<string>(['/api/deploy']);

export function handleHttp(svc: Service, res: HttpResponse, req: HttpRequest): void {
  const method = req.getMethod().toUpperCase();
  const url = req.getUrl();
  const r = reply(res);
  const m = router.match(method, url);
  if (m.kind === 'not-found') return sendRefusal(r, { status: 404, code: 'NO_SUCH_ENDPOINT', message: `no endpoint ${method} ${url}` });
  if (m.kind === 'method-not-allowed') {
    const allow = m.allow.join(', ');
    return sendRefusal(r, { status: 405, code: 'METHOD_NOT_ALLOWED', message: `${method} is not allowed on ${m.path.replace(/:(\w+)/g, '{$1}')} (${allow})` }, [['Allow', allow]]);
  }
  const withBody = method === 'POST' || method === 'PUT';
  const hasBody = withBody && !STREAMED.has(m.route.path);
  const call: Call = {
    svc,
    r,
    method,
    url,
    query: new URLSearchParams(req.getQuery() ?? ''),
    authorization: req.getHeader('authorization'),
    contentType: req.getHeader('content-type'),
    lastEventId: req.getHeader('last-event-id'),
    body: hasBody ? readBody(r, svc.args.maxBodyBytes) : null,
  };
  // a body refused before a handler awaited it must not surface as an unhandled rejection
  call.body?.catch(() => undefined);
  void (async () => {
    try {
      await m.route.handle(call, m.params);
    } catch (err) {
      sendFailure(r, err, svc.log, `${method} ${m.route.path}`, withBody);
    }
  })();
}
