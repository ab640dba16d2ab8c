'use strict';
/*
 * lib.js: what the conformance scripts that start their own heurekad
 * (auth.js, cluster.js) share: the child processes and clients stopped at
 * the end or on failure, fail(), a bound on the whole script, a free port,
 * a bounded GET, waitFor() and the instance a test client registers. Not
 * a test itself: run.sh runs only the scripts it names.
 */

const http = require('http');
const net = require('net');

const procs = [];	// child processes, SIGKILLed by cleanup()
const clients = [];	// eureka-js-client instances, their timers cleared
const failHooks = [];

// Stop every client's timers and kill every child still running.
function cleanup() {
  for (const c of clients) {
    try { clearInterval(c.heartbeat); clearInterval(c.registryFetch); } catch (e) { /* ignore */ }
  }
  for (const p of procs) {
    try { if (p.exitCode === null) p.kill('SIGKILL'); } catch (e) { /* ignore */ }
  }
}

// Run fn (e.g. print a client log) when the script fails, before cleanup.
function onFail(fn) {
  failHooks.push(fn);
}

// Print msg, run the failure hooks, clean up and exit 1.
function fail(msg) {
  console.error(`FAIL: ${msg}`);
  for (const fn of failHooks) fn();
  cleanup();
  process.exit(1);
}

// Fail the script named name unless it has finished within ms.
function bound(name, ms) {
  setTimeout(() => fail(`${name} did not finish within ${ms / 1000} s`), ms).unref();
}

// A TCP port free on 127.0.0.1 (bound, then released).
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

// GET path on 127.0.0.1:port, with the given "user:pass" if any, within
// 3 s: { status, body } (status 0 when there was no answer).
function get(port, path, cred) {
  const headers = { Accept: 'application/json' };
  if (cred) headers.Authorization = 'Basic ' + Buffer.from(cred).toString('base64');
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'GET', headers, timeout: 3000 },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
      });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end();
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Poll async fn every 100 ms until it is true; fail after ms.
async function waitFor(what, ms, fn) {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > end) fail(`timed out after ${ms} ms: ${what}`);
    await sleep(100);
  }
}

// The instance block of a test client: APP/id on 127.0.0.1:port.
function instance(app, id, port) {
  return {
    app, instanceId: id, hostName: '127.0.0.1', ipAddr: '127.0.0.1',
    port: { $: port, '@enabled': true }, vipAddress: app.toLowerCase(),
    statusPageUrl: `http://127.0.0.1:${port}/info`,
    dataCenterInfo: { '@class': 'com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo', name: 'MyOwn' },
  };
}

module.exports = {
  procs, clients, cleanup, onFail, fail, bound, freePort, get, sleep, waitFor, instance,
};
