/**
 * Management API, notifications: `POST /$/notify/test {severity, title, body}` sends one now,
 * past the dedup cooldown, and answers what was delivered (the body is checked in
 * protocols/objstore/notify.ts; the sending is actors/objstore/notify.ts).
 */
import { NotifyInputError, parseTestNotification } from '../../../protocols/objstore/notify.js';
import { StoreError } from '../store/context.js';
import { readJsonObject, sendJson } from './respond.js';
import { route, type ManageRoute } from './route.js';

export const notifyRoutes: ManageRoute[] = [
  route('POST', '/$/notify/test', async ({ services: { notifier }, r }) => {
    const body = await readJsonObject(r);
    if (!body) return;
    let n;
    try {
      n = parseTestNotification(body);
    } catch (err) {
      if (err instanceof NotifyInputError) throw new StoreError(400, err.code, err.message);
      throw err;
    }
    if (!notifier) throw new StoreError(503, 'NO_NOTIFIER', 'notifications are not set up in this process');
    const out = await notifier.deliver({ ...n, key: 'test' }, true);
    sendJson(r, 200, { severity: n.severity, ...out });
  }),
];
