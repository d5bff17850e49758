/**
 * A call with real media through the gateway: the application answers sipp's INVITE with the
 * SDP of a media bridge RTP endpoint made through the gateway (the real media link, a real
 * bridge), adds a tone endpoint to that session, and audio flows both ways between the tone
 * and sipp's RTP (sipp echoes what it receives: `-rtp_echo`). When the owner disconnects,
 * sipp receives the BYE and the bridge holds no session any more.
 */
import test from 'ava';
import { MEDIA_LINK_MODULE } from '../../actors/gateway/service.js';
import { BRIDGE_ID, type BridgeProtocol } from '../../actors/media-bridge/messages.js';
import { startBridge } from '../helpers/media.js';
import { freePort, scenario, sipp } from '../helpers/sip.js';
import { startGateway, until } from '../helpers/gateway.js';

interface Counters { packetsIn: number; packetsOut: number }

test('a call with real media: RTP endpoint SDP in the 200, tone ↔ sipp RTP both ways; the owner leaves: BYE and no session left', async (t) => {
  t.timeout(90_000);
  const bridge = await startBridge(t);
  const h = await startGateway(t, { mediaBackends: bridge.url }, { mediaLinkModule: MEDIA_LINK_MODULE });
  const app = await h.connect();
  let session = '';
  let rtpEndpoint = '';
  app.onRequest('sip.invite', async (inv) => {
    const s = await app.call('session.create', { callId: inv.callId });
    session = String(s.session_id);
    const ep = await app.call('endpoint.rtp.create_from_offer', { session_id: session, sdp: inv.sdp });
    rtpEndpoint = String(ep.endpoint_id);
    await app.call('endpoint.create_tone', { session_id: session, tone: 'sine', frequency: 440 });
    return { action: 'answer', sdp: String(ep.sdp_answer) };
  });
  await app.call('route.register', { routes: [{ match: 'exact', value: 'media' }] });
  const confirmed = app.waitFor('sip.confirmed', undefined, 20_000);
  const mediaPort = await freePort();
  const call = sipp(t, h.sipPort, ['-sf', scenario(t, 'uac-bye-in.xml'), '-s', 'media', '-m', '1', '-mp', String(mediaPort), '-rtp_echo']);
  await confirmed;
  const counters = async () => {
    const info = await app.call('session.info', { session_id: session });
    const ep = (info.endpoints as Array<{ endpoint_id: string; counters: Counters }>).find((e) => e.endpoint_id === rtpEndpoint)!;
    return ep.counters;
  };
  await until(async () => {
    const c = await counters();
    return c.packetsOut >= 25 && c.packetsIn >= 25;
  }, 15_000, 'RTP both ways');
  const c = await counters();
  t.true(c.packetsOut >= 25, `tone packets sent to sipp: ${c.packetsOut}`);
  t.true(c.packetsIn >= 25, `packets echoed back by sipp: ${c.packetsIn}`);
  t.is((await bridge.system.ref<BridgeProtocol>(BRIDGE_ID).request({ type: 'info' })).sessions, 1);
  await app.close();
  const r = await call;
  t.is(r.code, 0, r.stdout + r.errors);
  t.is(r.successful, 1, 'sipp received the BYE');
  await until(async () => (await bridge.system.ref<BridgeProtocol>(BRIDGE_ID).request({ type: 'info' })).sessions === 0, 10_000, 'the session destroyed on the bridge');
  t.is((await h.healthz()).body.calls, 0);
});
