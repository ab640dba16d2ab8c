'use strict';
/*
 * conformance.js: drive heurekad with the third-party eureka-js-client
 * (npm, 4.5.0) and check, over raw HTTP, that what the client does lands on
 * the server and what others do reaches the client. Every step is bounded
 * in time; the first broken step fails the run with a clear message.
 *
 * Steps: register (visible via GET), heartbeats (lease renewal timestamp
 * advances), full registry fetch (sees an instance registered over raw
 * HTTP), delta fetch (a second client sees a registration and a
 * cancellation made after its first full fetch, through deltas only),
 * re-register after the server forgot the instance (DELETE, next heartbeat
 * 404, client registers again), deregister on stop.
 *
 * Environment: HEUREKA_URL (e.g. http://127.0.0.1:8761/eureka/), set by
 * run.sh. CONFORMANCE_VERBOSE=1 prints the client's log as it happens.
 */

const http = require('http');
const { Eureka } = require('eureka-js-client');

const BASE = new URL(process.env.HEUREKA_URL || 'http://127.0.0.1:8761/eureka/');
const SERVICE_PATH = BASE.pathname.replace(/\/?$/, '/') + 'apps/';
const VERBOSE = process.env.CONFORMANCE_VERBOSE === '1';
const STEP_TIMEOUT_MS = 15000;
const TOTAL_TIMEOUT_MS = 120000;

const clientLog = [];
let passed = 0;
const clients = [];

/* A logger for eureka-js-client that keeps the last lines for failures. */
function makeLogger(name) {
  const log = (level) => (...args) => {
    const line = `[${name} ${level}] ` + args.map((a) =>
      (a instanceof Error ? a.stack : (typeof a === 'string' ? a : JSON.stringify(a)))).join(' ');
    /* The client warns on every lookup that finds nothing: not news. */
    if (/Unable to retrieve/.test(line)) return;
    clientLog.push(line);
    if (clientLog.length > 200) clientLog.shift();
    if (VERBOSE) console.error(line);
  };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/* End the run with a failure message, the client log and exit code 1. */
function fail(msg) {
  console.error(`FAIL: ${msg}`);
  if (clientLog.length) {
    console.error('--- last eureka-js-client log lines ---');
    clientLog.slice(-40).forEach((l) => console.error(l));
  }
  for (const c of clients) {
    try { clearInterval(c.heartbeat); clearInterval(c.registryFetch); } catch (e) { /* ignore */ }
  }
  process.exit(1);
}

/* One raw HTTP request to the server; resolves to {status, headers, body}. */
function request(method, path, { headers = {}, body = null } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: BASE.hostname, port: BASE.port, method, path,
      headers: Object.assign(body ? { 'Content-Length': Buffer.byteLength(body) } : {}, headers),
      timeout: 5000,
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers,
        body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

/* GET one instance as JSON; null when the server answers 404. */
async function getInstance(app, id) {
  const r = await request('GET', `${SERVICE_PATH}${app}/${encodeURIComponent(id)}`,
    { headers: { Accept: 'application/json' } });
  if (r.status === 404) return null;
  if (r.status !== 200) fail(`GET ${app}/${id}: HTTP ${r.status}: ${r.body.slice(0, 500)}`);
  try {
    return JSON.parse(r.body).instance;
  } catch (e) {
    return fail(`GET ${app}/${id}: body is not JSON: ${r.body.slice(0, 500)}`);
  }
}

/* Register an instance over raw HTTP (not through the client). */
async function rawRegister(app, id, host, port) {
  const now = Date.now();
  const body = JSON.stringify({ instance: {
    instanceId: id, hostName: host, app, ipAddr: '127.0.0.1', status: 'UP',
    overriddenstatus: 'UNKNOWN', port: { $: port, '@enabled': 'true' },
    securePort: { $: 443, '@enabled': 'false' }, countryId: 1,
    dataCenterInfo: { '@class': 'com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo', name: 'MyOwn' },
    leaseInfo: { renewalIntervalInSecs: 30, durationInSecs: 90 },
    metadata: { origin: 'raw' }, vipAddress: app.toLowerCase(), secureVipAddress: app.toLowerCase(),
    isCoordinatingDiscoveryServer: 'false', lastUpdatedTimestamp: String(now), lastDirtyTimestamp: String(now),
  } });
  const r = await request('POST', `${SERVICE_PATH}${app}`,
    { headers: { 'Content-Type': 'application/json' }, body });
  if (r.status !== 204) fail(`raw register ${app}/${id}: want 204, got ${r.status}: ${r.body.slice(0, 500)}`);
}

/* Poll fn (sync or async) every 100 ms until it returns truthy. */
async function waitFor(what, fn, ms = STEP_TIMEOUT_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) fail(`timed out after ${ms} ms waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/* Record a passed check. */
function ok(what) {
  passed += 1;
  console.log(`ok ${passed} - ${what}`);
}

/* A client with short intervals, recording which fetches it makes. */
function makeClient(name, opts) {
  const fetches = { full: 0, delta: 0 };
  const client = new Eureka({
    logger: makeLogger(name),
    cwd: __dirname + '/no-such-dir',	/* never read an eureka-client.yml */
    shouldUseDelta: !!opts.shouldUseDelta,
    requestMiddleware: (req, done) => {
      if ((req.method || 'GET').toUpperCase() === 'GET') {
        if (req.uri === 'delta') fetches.delta += 1;
        else if (req.uri === '') fetches.full += 1;
      }
      done(req);
    },
    instance: opts.instance,
    eureka: Object.assign({
      host: BASE.hostname,
      port: Number(BASE.port),
      servicePath: SERVICE_PATH,
      heartbeatInterval: 500,
      registryFetchInterval: 500,
      maxRetries: 0,
      requestRetryDelay: 100,
    }, opts.eureka || {}),
  });
  client.fetches = fetches;
  client.counts = { registered: 0, heartbeat: 0, deregistered: 0 };
  client.on('registered', () => { client.counts.registered += 1; });
  client.on('heartbeat', () => { client.counts.heartbeat += 1; });
  client.on('deregistered', () => { client.counts.deregistered += 1; });
  clients.push(client);
  return client;
}

/* Promise wrappers around start/stop with a bound. */
function startClient(client, what) {
  return new Promise((resolve) => {
    const t = setTimeout(() => fail(`${what}: start() did not finish in ${STEP_TIMEOUT_MS} ms`),
      STEP_TIMEOUT_MS);
    client.start((err) => {
      clearTimeout(t);
      if (err) fail(`${what}: start() failed: ${err && err.message ? err.message : err}`);
      resolve();
    });
  });
}
function stopClient(client, what) {
  return new Promise((resolve) => {
    const t = setTimeout(() => fail(`${what}: stop() did not finish in ${STEP_TIMEOUT_MS} ms`),
      STEP_TIMEOUT_MS);
    client.stop((err) => {
      clearTimeout(t);
      if (err) fail(`${what}: stop() (deregister) failed: ${err && err.message ? err.message : err}`);
      resolve();
    });
  });
}

const byId = (list, id) => (list || []).find((i) => i.instanceId === id);

async function main() {
  const tag = `${process.pid}`;
  const APP_A = 'CONF-A';
  const ID_A = `conf-a-${tag}`;

  /* 1. register */
  const a = makeClient('A', {
    instance: {
      app: APP_A, instanceId: ID_A, hostName: `conf-a-${tag}.local`, ipAddr: '127.0.0.1',
      port: { $: 3001, '@enabled': 'true' }, vipAddress: 'conf-a',
      statusPageUrl: 'http://127.0.0.1:3001/info',
      dataCenterInfo: { '@class': 'com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo', name: 'MyOwn' },
    },
  });
  await startClient(a, 'client A');
  if (a.counts.registered !== 1) fail(`client A: expected 1 'registered' event, saw ${a.counts.registered}`);
  let inst = await getInstance(APP_A, ID_A);
  if (!inst) fail(`register: GET apps/${APP_A}/${ID_A} is 404 after the client registered`);
  if (inst.app !== APP_A || inst.status !== 'UP' || inst.hostName !== `conf-a-${tag}.local`) {
    fail(`register: server copy differs: ${JSON.stringify(inst)}`);
  }
  ok('register: client registers (204) and the server shows the instance');

  /* 2. heartbeats */
  const renew0 = Number(inst.leaseInfo && inst.leaseInfo.lastRenewalTimestamp);
  if (!Number.isFinite(renew0)) fail(`heartbeat: leaseInfo.lastRenewalTimestamp missing: ${JSON.stringify(inst.leaseInfo)}`);
  const hb0 = a.counts.heartbeat;
  await waitFor('two heartbeats answered 200', () => a.counts.heartbeat >= hb0 + 2);
  await waitFor('lastRenewalTimestamp to advance on the server', async () => {
    const i = await getInstance(APP_A, ID_A);
    return i && Number(i.leaseInfo.lastRenewalTimestamp) > renew0;
  });
  ok('heartbeat: renewals get 200 and the lease renewal timestamp advances');

  /* 3. full registry fetch sees a raw-HTTP registration */
  const APP_RAW = 'CONF-RAW';
  const ID_RAW = `conf-raw-${tag}`;
  await rawRegister(APP_RAW, ID_RAW, `conf-raw-${tag}.local`, 4001);
  await waitFor(`client A (full fetches) to see ${APP_RAW}/${ID_RAW}`, () =>
    byId(a.getInstancesByAppId(APP_RAW), ID_RAW));
  if (!byId(a.getInstancesByAppId(APP_A), ID_A)) fail('full fetch: client A does not see itself');
  if (a.fetches.full < 2) fail(`full fetch: expected repeated full fetches, saw ${a.fetches.full}`);
  ok('full fetch: the client sees instances registered by others');

  /* 4. delta fetch: a second client that only fetches */
  const b = makeClient('B', {
    shouldUseDelta: true,
    instance: { app: 'CONF-B', vipAddress: 'conf-b', port: { $: 3002, '@enabled': 'true' },
      dataCenterInfo: { name: 'MyOwn' } },
    eureka: { registerWithEureka: false, fetchRegistry: true },
  });
  await startClient(b, 'client B');
  if (b.fetches.full !== 1) fail(`delta: client B should have made exactly one full fetch, made ${b.fetches.full}`);
  if (!byId(b.getInstancesByAppId(APP_RAW), ID_RAW)) fail('delta: client B\'s first full fetch misses the raw instance');
  const APP_D = 'CONF-DELTA';
  const ID_D = `conf-delta-${tag}`;
  await rawRegister(APP_D, ID_D, `conf-delta-${tag}.local`, 5001);
  await waitFor(`client B (deltas) to see the new ${APP_D}/${ID_D}`, () =>
    byId(b.getInstancesByAppId(APP_D), ID_D));
  if (b.fetches.delta < 1) fail('delta: client B saw the change without a delta fetch');
  ok('delta: a registration after the first full fetch arrives through deltas');
  let r = await request('DELETE', `${SERVICE_PATH}${APP_D}/${ID_D}`);
  if (r.status !== 200) fail(`cancel ${APP_D}/${ID_D}: want 200, got ${r.status}`);
  await waitFor(`client B (deltas) to drop the cancelled ${APP_D}/${ID_D}`, () =>
    !byId(b.getInstancesByAppId(APP_D), ID_D));
  if (b.fetches.full !== 1) fail(`delta: client B fell back to full fetches (${b.fetches.full})`);
  ok('delta: a cancellation arrives through deltas');
  await stopClient(b, 'client B');

  /* 5. re-register after the server forgot the instance */
  const reg0 = a.counts.registered;
  r = await request('DELETE', `${SERVICE_PATH}${APP_A}/${ID_A}`);
  if (r.status !== 200) fail(`forget ${APP_A}/${ID_A}: DELETE want 200, got ${r.status}`);
  await waitFor('client A to re-register after its heartbeat got 404', () =>
    a.counts.registered > reg0);
  await waitFor(`the server to show ${APP_A}/${ID_A} again`, () => getInstance(APP_A, ID_A));
  const hb1 = a.counts.heartbeat;
  await waitFor('heartbeats to succeed again after re-registration', () => a.counts.heartbeat >= hb1 + 2);
  ok('re-register: a 404 heartbeat makes the client register again');

  /* 6. deregister on stop */
  await stopClient(a, 'client A');
  if (a.counts.deregistered !== 1) fail('stop: client A did not report a successful deregistration');
  inst = await getInstance(APP_A, ID_A);
  if (inst) fail(`stop: the server still shows ${APP_A}/${ID_A} after the client deregistered`);
  ok('deregister: stop() cancels the instance on the server');

  r = await request('DELETE', `${SERVICE_PATH}${APP_RAW}/${ID_RAW}`);
  if (r.status !== 200) fail(`cleanup: cancel ${APP_RAW}/${ID_RAW}: want 200, got ${r.status}`);
  console.log(`conformance: all ${passed} checks passed`);
  process.exit(0);
}

setTimeout(() => fail(`the whole run took longer than ${TOTAL_TIMEOUT_MS} ms`), TOTAL_TIMEOUT_MS).unref();
process.on('unhandledRejection', (e) => fail(`unexpected error: ${e && e.stack ? e.stack : e}`));
main().catch((e) => fail(`unexpected error: ${e && e.stack ? e.stack : e}`));
