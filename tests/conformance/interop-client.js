'use strict';
/*
 * interop-client.js: libheureka and eureka-js-client (4.5.0) against one
 * heurekad. An instance kept registered by `heureka agent` (libheureka) is
 * seen correctly by eureka-js-client (by app and by VIP, with its status,
 * address, port and metadata) and disappears from it after the agent's
 * SIGTERM; an instance registered by eureka-js-client is seen by
 * libheureka (`heureka watch`, which runs the library's full + delta
 * fetch and merge, and `heureka get --json`), and is gone for it after the
 * js client stops.
 *
 * Environment (set by run.sh): HEUREKA_URL, HEUREKA (the CLI).
 */

const { spawn, execFile } = require('child_process');
const { Eureka } = require('eureka-js-client');

const URL_ = process.env.HEUREKA_URL || 'http://127.0.0.1:8761/eureka/';
const BASE = new URL(URL_);
const CLI = process.env.HEUREKA;
const STEP_MS = 20000;
const children = [];
const jsLog = [];
let js = null;

function fail(msg) {
  console.error(`FAIL: ${msg}`);
  jsLog.slice(-30).forEach((l) => console.error(l));
  for (const c of children) { try { c.kill('SIGKILL'); } catch (e) { /* */ } }
  if (js) { try { clearInterval(js.heartbeat); clearInterval(js.registryFetch); } catch (e) { /* */ } }
  process.exit(1);
}

function logger() {
  const f = (lvl) => (...a) => { jsLog.push(`[js ${lvl}] ${a.join(' ')}`); if (jsLog.length > 200) jsLog.shift(); };
  return { debug: f('debug'), info: f('info'), warn: f('warn'), error: f('error') };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* Poll fn until it returns a truthy value or the step times out. */
async function waitFor(what, fn) {
  const end = Date.now() + STEP_MS;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) fail(`timed out: ${what}`);
    await sleep(200);
  }
}

/* Run the heureka CLI; resolves to {code, out}. */
function cli(args) {
  return new Promise((resolve) => {
    execFile(CLI, args, { timeout: 15000 }, (err, out) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: String(out) });
    });
  });
}

async function main() {
  if (!CLI) fail('HEUREKA (the heureka CLI) is not set');
  setTimeout(() => fail('whole run took too long'), 120000).unref();

  /* 1. libheureka registers, eureka-js-client sees it. */
  const agent = spawn(CLI, ['agent', '--app', 'heureka-side', '--port', '18111',
    '--hostname', 'hk.local', '--ip', '127.0.0.1', '--metadata', 'lang=c',
    '--renewal-interval', '1', '--server', URL_], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(agent);
  let agentErr = '';
  agent.stderr.on('data', (d) => { agentErr += d; });

  js = new Eureka({
    logger: logger(),
    cwd: `${__dirname}/no-such-dir`,
    shouldUseDelta: true,
    instance: {
      app: 'JSIDE',
      instanceId: 'js.local:jside:18222',
      hostName: 'js.local',
      ipAddr: '127.0.0.2',
      statusPageUrl: 'http://js.local:18222/info',
      port: { $: 18222, '@enabled': true },
      vipAddress: 'jside',
      metadata: { lang: 'js' },
      dataCenterInfo: { '@class': 'com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo', name: 'MyOwn' },
    },
    eureka: {
      host: BASE.hostname,
      port: Number(BASE.port),
      servicePath: BASE.pathname.replace(/\/?$/, '/') + 'apps/',
      heartbeatInterval: 1000,
      registryFetchInterval: 500,
      maxRetries: 0,
      requestRetryDelay: 100,
    },
  });
  await new Promise((resolve) => js.start((err) => (err ? fail(`js start: ${err}`) : resolve())));

  const seen = await waitFor('eureka-js-client sees HEUREKA-SIDE', () => {
    const l = js.getInstancesByAppId('HEUREKA-SIDE');
    return l && l.length ? l[0] : null;
  });
  const port = seen.port && (seen.port.$ !== undefined ? Number(seen.port.$) : Number(seen.port));
  if (seen.instanceId !== 'hk.local:heureka-side:18111') fail(`instanceId ${seen.instanceId}`);
  if (seen.app !== 'HEUREKA-SIDE') fail(`app ${seen.app}`);
  if (seen.ipAddr !== '127.0.0.1') fail(`ipAddr ${seen.ipAddr}`);
  if (port !== 18111) fail(`port ${JSON.stringify(seen.port)}`);
  if (seen.status !== 'UP') fail(`status ${seen.status}`);
  if (!seen.metadata || seen.metadata.lang !== 'c') fail(`metadata ${JSON.stringify(seen.metadata)}`);
  if (!seen.dataCenterInfo || seen.dataCenterInfo.name !== 'MyOwn') fail(`dataCenterInfo ${JSON.stringify(seen.dataCenterInfo)}`);
  if (seen.healthCheckUrl !== 'http://hk.local:18111/actuator/health') fail(`healthCheckUrl ${seen.healthCheckUrl}`);
  const byVip = js.getInstancesByVipAddress('heureka-side');
  if (!byVip || byVip.length !== 1) fail(`by VIP: ${JSON.stringify(byVip)}`);
  console.log('ok 1 - eureka-js-client sees the libheureka instance');

  /* 2. eureka-js-client registers, libheureka sees it (fetch + deltas). */
  const watch = spawn(CLI, ['watch', 'JSIDE', '--interval', '1', '--server', URL_],
    { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(watch);
  let watched = '';
  watch.stdout.on('data', (d) => { watched += d; });
  await waitFor('heureka watch prints ADDED JSIDE', () =>
    /^ADDED JSIDE js\.local:jside:18222 UP$/m.test(watched));
  const got = await cli(['get', 'JSIDE', 'js.local:jside:18222', '--json', '--server', URL_]);
  if (got.code !== 0) fail(`heureka get JSIDE: exit ${got.code}`);
  let inst;
  try { inst = JSON.parse(got.out).instance; } catch (e) { fail(`heureka get --json: ${got.out}`); }
  if (inst.ipAddr !== '127.0.0.2' || inst.metadata.lang !== 'js') fail(`libheureka view: ${got.out}`);
  const tbl = await cli(['get', 'JSIDE', '--server', URL_]);
  if (tbl.code !== 0 || !/JSIDE\s+js\.local:jside:18222\s+UP\s+127\.0\.0\.2\s+18222/.test(tbl.out)) {
    fail(`heureka get table: ${tbl.out}`);
  }
  console.log('ok 2 - libheureka sees the eureka-js-client instance');

  /* 3. The agent's SIGTERM cancels: eureka-js-client stops seeing it. */
  const exited = new Promise((resolve) => agent.on('exit', (code) => resolve(code)));
  agent.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) fail(`agent exit ${code}: ${agentErr}`);
  await waitFor('eureka-js-client drops HEUREKA-SIDE', () => {
    const l = js.getInstancesByAppId('HEUREKA-SIDE');
    return !l || l.length === 0;
  });
  console.log('ok 3 - cancel by libheureka reaches eureka-js-client');

  /* 4. The js client stops: libheureka's delta shows DELETED. */
  await new Promise((resolve) => js.stop(() => resolve()));
  js = null;
  await waitFor('heureka watch prints DELETED JSIDE', () =>
    /^DELETED JSIDE js\.local:jside:18222 /m.test(watched));
  const gone = await cli(['get', 'JSIDE', '--server', URL_]);
  if (gone.code !== 1) fail(`heureka get after js stop: exit ${gone.code}`);
  watch.kill('SIGTERM');
  console.log('ok 4 - cancel by eureka-js-client reaches libheureka');
  process.exit(0);
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
