/**
 * The route handler's count, in a module of its own: the local SIP server counts the routes it
 * takes from its copy of the gateway's table here too (sipserver/routing.ts `lookupLocally`),
 * without registering every other gateway metric on its thread.
 */
import client from 'prom-client';

export const routeLookupsTotal = new client.Counter({
  name: 'gateway_route_lookups_total',
  help: 'Route lookups answered, by outcome (route, fallback, fallback-failed, not-found, draining)',
  labelNames: ['outcome'],
});
