/**
 * The scheduler refuses with typed codes and messages that name no route
 * (actors/scheduler/messages.ts SchedulerRefusal); the object store's front gives each its HTTP
 * status and, where a route helps, names it (http/maintenance.ts refusalError). The answers are
 * the ones the API gave when the scheduler chose the status itself.
 */
import test from 'ava';
import { refusalError } from '../../actors/objstore/http/maintenance.js';
import type { SchedulerRefusal } from '../../actors/scheduler/messages.js';

const cases: Array<[SchedulerRefusal, string, number, string]> = [
  ['NO_SUCH_VOLUME', 'no volume 9', 404, 'no volume 9'],
  ['VOLUME_DELETED', 'volume 3 is deleted', 409, 'volume 3 is deleted'],
  ['NOT_DRAINING', 'volume 3 is not draining', 409, 'volume 3 is not draining'],
  ['NO_DRAIN', 'volume 3 has not been drained', 404, 'volume 3 has not been drained'],
  ['REBALANCE_RUNNING', 'a rebalance is running already', 409, 'a rebalance is running already: PUT /$/rebalance retunes it, DELETE cancels it'],
  ['FROZEN', 'a maintenance freeze is active', 409, 'a maintenance freeze is active: PUT /$/maintenance-freeze {"frozen": false} first'],
  ['NO_REBALANCE', 'no rebalance is running', 409, 'no rebalance is running: POST /$/rebalance starts one'],
  ['NOT_FOUND', 'no object $0', 404, 'no object $0'],
  ['NO_FAULT', 'object $0 has no fault', 404, 'object $0 has no fault'],
];

for (const [code, message, status, answered] of cases) {
  test(`${code} answers ${status}: ${answered}`, (t) => {
    const e = refusalError(code, message);
    t.is(e.status, status);
    t.is(e.code, code);
    t.is(e.message, answered);
    t.deepEqual(e.headers, []);
  });
}
