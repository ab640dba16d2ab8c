'use strict';
/*
 * auth.js: eureka-js-client against a heurekad with authentication on
 * (docs/security.md), the credentials in its service URL as Spring
 * users write them (http://user:pass@host:port/eureka/apps/). Starts its
 * own server (HEUREKAD, 127.0.0.1, a free port), then:
 *   1. a client with the credentials registers, heartbeats (the lease's
 *      lastRenewalTimestamp advances) and fetches the registry;
 *   2. a client without them, and one with a wrong password, cannot
 *      register (start() fails, nothing appears in the registry);
 *   3. stopping the first client cancels its lease (an authenticated
 *      DELETE).
 * Every step is bounded; the server is stopped by PID at the end or on
 * failure. The server run.sh starts (HEUREKA_URL) is not used.
 */

const { spawn } = require('child_process');
const { Eureka } = require('eureka-js-client');
const {
  procs, clients, cleanup, fail, bound, freePort, get, waitFor, instance,
} = require('./lib');

const HEUREKAD = process.env.HEUREKAD;
const VERBOSE = process.env.CONFORMANCE_VERBOSE === '1';
const APP = 'AUTHJS';
const USER = 'jsuser';
const PASS = `js-Secr3t-${process.pid}`;

bound('auth.js', 60000);

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function makeClient(id, url, fetch) {
  const c = new Eureka({
    logger: quiet,
    cwd: __dirname + '/no-such-dir',
    instance: instance(APP, id, 9998),
    eureka: {
      serviceUrls: { default: [url] },
      registerWithEureka: true,
      fetchRegistry: fetch,
      heartbeatInterval: 300,
      registryFetchInterval: 300,
      maxRetries: 0,
      requestRetryDelay: 100,
    },
  });
  clients.push(c);
  return c;
}

// Start c; resolves with the error start() reported (null on success).
function start(c) {
  return new Promise((resolve) => {
    const t = setTimeout(() => fail('start() did not finish'), 15000);
    c.start((err) => { clearTimeout(t); resolve(err || null); });
  });
}

async function main() {
  if (!HEUREKAD) fail('HEUREKAD is not set');
  const port = await freePort();
  const p = spawn(HEUREKAD, ['-b', '127.0.0.1', '-p', String(port),
    '-D', `spring.security.user.name=${USER}`],
  { env: Object.assign({}, process.env, { SPRING_SECURITY_USER_PASSWORD: PASS }),
    stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(p);
  let log = '';
  p.stdout.on('data', (d) => { log += d; if (VERBOSE) process.stderr.write(d); });
  p.stderr.on('data', (d) => { log += d; if (VERBOSE) process.stderr.write(d); });
  const cred = `${USER}:${PASS}`;
  await waitFor('server up', 10000, async () => (await get(port, '/eureka/apps', cred)).status === 200);
  if ((await get(port, '/eureka/apps')).status !== 401) fail('anonymous GET apps was not 401');
  console.log('ok - server up, anonymous reads refused');

  const base = `http://127.0.0.1:${port}/eureka/apps/`;
  const good = makeClient('js-1', `http://${USER}:${PASS}@127.0.0.1:${port}/eureka/apps/`, true);
  const err = await start(good);
  if (err) fail(`client with credentials: start() failed: ${err.message || err}`);
  await waitFor('registered', 5000, async () =>
    (await get(port, `/eureka/apps/${APP}/js-1`, cred)).status === 200);
  const t0 = JSON.parse((await get(port, `/eureka/apps/${APP}/js-1`, cred)).body).instance
    .leaseInfo.lastRenewalTimestamp;
  await waitFor('heartbeats renew the lease', 5000, async () =>
    JSON.parse((await get(port, `/eureka/apps/${APP}/js-1`, cred)).body).instance
      .leaseInfo.lastRenewalTimestamp > t0);
  await waitFor('the client fetched the registry', 5000, async () =>
    good.getInstancesByAppId(APP).some((i) => i.instanceId === 'js-1'));
  console.log('ok - client with credentials in its URL registers, heartbeats, fetches');

  for (const [id, url] of [['js-anon', base],
    ['js-wrong', `http://${USER}:wrong@127.0.0.1:${port}/eureka/apps/`]]) {
    const c = makeClient(id, url, false);
    if (!(await start(c))) fail(`${id}: start() succeeded without the right credentials`);
    c.stop();
    if ((await get(port, `/eureka/apps/${APP}/${id}`, cred)).status !== 404) fail(`${id} registered`);
  }
  console.log('ok - clients without or with wrong credentials cannot register');

  await new Promise((resolve) => good.stop(() => resolve()));
  await waitFor('lease cancelled on stop', 5000, async () =>
    (await get(port, `/eureka/apps/${APP}/js-1`, cred)).status === 404);
  console.log('ok - stop() cancels the lease');

  if (log.includes(PASS)) fail('the password is in the server log');
  cleanup();
  console.log('PASS auth.js');
  process.exit(0);
}

main().catch((e) => fail(e.stack || String(e)));
