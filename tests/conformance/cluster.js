'use strict';
/*
 * cluster.js: eureka-js-client against a two-node heurekad cluster (issue
 * 3, scenario 7). Starts its own two peers (HEUREKAD, 127.0.0.1, free
 * ports, each listing both URLs), then:
 *   1. client 1 (serviceUrls [A, B]) registers -- on A;
 *   2. client 2 (serviceUrls [B, A], fetch only) sees the instance in its
 *      registry, fetched from B: it got there by replication;
 *   3. A is killed (SIGKILL); client 1's heartbeats fail over to B and keep
 *      the lease alive there (lastRenewalTimestamp advances on B).
 * Every step is bounded; both servers are stopped by PID at the end or on
 * failure. The server run.sh starts (HEUREKA_URL) is not used.
 */

const { spawn } = require('child_process');
const { Eureka } = require('eureka-js-client');
const {
  procs, clients, cleanup, onFail, fail, bound, freePort, get, waitFor, instance,
} = require('./lib');

const HEUREKAD = process.env.HEUREKAD;
const VERBOSE = process.env.CONFORMANCE_VERBOSE === '1';
const APP = 'CLUSTERJS';
const clientLog = [];

onFail(() => clientLog.slice(-40).forEach((l) => console.error(l)));
bound('cluster.js', 90000);

function makeLogger(name) {
  const log = (level) => (...args) => {
    const line = `[${name} ${level}] ` + args.map((a) =>
      (a instanceof Error ? a.message : (typeof a === 'string' ? a : JSON.stringify(a)))).join(' ');
    clientLog.push(line);
    if (clientLog.length > 200) clientLog.shift();
    if (VERBOSE) console.error(line);
  };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

function startServer(name, port, peers) {
  const p = spawn(HEUREKAD, ['-b', '127.0.0.1', '-p', String(port), '--peers', peers,
    '-D', 'eureka.server.anti-entropy-interval-ms=500',
    '-D', 'eureka.server.wait-time-in-ms-when-sync-empty=5000'],
  { stdio: ['ignore', VERBOSE ? 'inherit' : 'ignore', VERBOSE ? 'inherit' : 'ignore'] });
  procs.push(p);
  return p;
}

function makeClient(name, urls, register) {
  const c = new Eureka({
    logger: makeLogger(name),
    cwd: __dirname + '/no-such-dir',
    instance: instance(APP, `${name}-1`, 9999),
    eureka: {
      serviceUrls: { default: urls },
      registerWithEureka: register,
      fetchRegistry: !register,
      heartbeatInterval: 500,
      registryFetchInterval: 500,
      maxRetries: 3,
      requestRetryDelay: 100,
    },
  });
  clients.push(c);
  return c;
}

function start(c, what) {
  return new Promise((resolve) => {
    const t = setTimeout(() => fail(`${what}: start() did not finish`), 15000);
    c.start((err) => {
      clearTimeout(t);
      if (err) fail(`${what}: start() failed: ${err.message || err}`);
      resolve();
    });
  });
}

async function main() {
  if (!HEUREKAD) fail('HEUREKAD is not set');
  const pa = await freePort();
  const pb = await freePort();
  const ua = `http://127.0.0.1:${pa}/eureka/`;
  const ub = `http://127.0.0.1:${pb}/eureka/`;
  const a = startServer('A', pa, `${ua},${ub}`);
  startServer('B', pb, `${ua},${ub}`);
  await waitFor('both peers open for reads', 20000, async () =>
    (await get(pa, '/eureka/apps')).status === 200 && (await get(pb, '/eureka/apps')).status === 200);
  console.log('ok - two peers up');

  const c1 = makeClient('c1', [`${ua}apps/`, `${ub}apps/`], true);
  await start(c1, 'client 1');
  await waitFor('registered on A', 5000, async () =>
    (await get(pa, `/eureka/apps/${APP}/c1-1`)).status === 200);
  console.log('ok - client 1 registered on A');

  const c2 = makeClient('c2', [`${ub}apps/`, `${ua}apps/`], false);
  await start(c2, 'client 2');
  await waitFor('client 2 (reading B) sees the instance', 10000, async () =>
    c2.getInstancesByAppId(APP).some((i) => i.instanceId === 'c1-1'));
  console.log('ok - client 2 fetching from B sees the instance registered on A');

  a.kill('SIGKILL');
  const before = JSON.parse((await get(pb, `/eureka/apps/${APP}/c1-1`)).body || '{}');
  const t0 = before.instance ? before.instance.leaseInfo.lastRenewalTimestamp : 0;
  await waitFor('client 1 heartbeats reach B after A died', 15000, async () => {
    const r = await get(pb, `/eureka/apps/${APP}/c1-1`);
    if (r.status !== 200) return false;
    return JSON.parse(r.body).instance.leaseInfo.lastRenewalTimestamp > t0;
  });
  console.log('ok - client 1 failed over to B, lease renewed there');

  cleanup();
  console.log('PASS cluster.js');
  process.exit(0);
}

main().catch((e) => fail(e.stack || String(e)));
