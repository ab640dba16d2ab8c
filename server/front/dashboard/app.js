/*
 * heureka dashboard: refreshes the server-rendered page in place. The
 * instance table follows the watch stream ({api}heureka/watch, Server-Sent
 * Events): each ADDED, MODIFIED, DELETED or LEADER event changes the table
 * at once. The JSON feed heureka-assets/status.json (counters, replicas,
 * banners) is read every 30 s while the stream is open, every 5 s when it
 * is not (an old server, a RESET, an error: the stream is reopened after a
 * pause). The charts are drawn here as inline SVG from
 * heureka-assets/history.json, the server's ring of the last hour. ?refresh=S
 * on the page's URL sets the feed's period while the stream is open.
 * Every value is attacker-controlled (app names, ids, metadata), so
 * the DOM is built with createElement/textContent only, never innerHTML,
 * and only http(s) URLs become links.
 */
'use strict';
(function () {
  var POLL_MS = 5000;
  var SLOW_MS = 30000;
  var RETRY_MS = 5000;
  var base = document.body.getAttribute('data-base') || '/';
  var api = document.body.getAttribute('data-api') || '/eureka/';
  var feed = base + 'heureka-assets/status.json';
  var historyUrl = base + 'heureka-assets/history.json';
  var SVGNS = 'http://www.w3.org/2000/svg';
  var lastFeed = null;
  var watching = false;
  var pollTimer = null;
  var openApps = {};
  var STATUS_ORDER = ['UP', 'DOWN', 'STARTING', 'OUT_OF_SERVICE', 'UNKNOWN'];

  /* createElement with an optional class and text. */
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  /* Only http:// and https:// URLs may become links. */
  function isHttp(url) {
    return typeof url === 'string' && /^https?:\/\//i.test(url);
  }

  /* A link when url is http(s), else a plain span. */
  function linkOrText(url, text) {
    var e;
    if (isHttp(url)) {
      e = el('a', null, text);
      e.href = url;
      e.rel = 'noopener noreferrer';
    } else {
      e = el('span', null, text);
    }
    return e;
  }

  /* ms since the epoch as the server prints it (ISO 8601, UTC). */
  function iso(ms) {
    if (!ms || ms <= 0) return '-';
    try {
      return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
    } catch (e) {
      return '-';
    }
  }

  /* Replace all children of node by the given ones. */
  /* A time and how long ago it was ("... (12 s ago)"). */
  function ago(ms) {
    var t = iso(ms);
    var n = Number(ms);
    if (!n || n <= 0) return t;
    var s = Math.max(0, Math.round((Date.now() - n) / 1000));
    var how = s < 120 ? s + ' s' : s < 7200 ? Math.round(s / 60) + ' min' :
      Math.round(s / 3600) + ' h';
    return t + ' (' + how + ' ago)';
  }

  function fill(node, children) {
    while (node.firstChild) node.removeChild(node.firstChild);
    for (var i = 0; i < children.length; i++) node.appendChild(children[i]);
  }

  /* <tr><th>k</th><td>v</td></tr>; v may be a node. */
  function kvRow(k, v) {
    var tr = el('tr');
    tr.appendChild(el('th', null, k));
    var td = el('td');
    if (v instanceof Node) td.appendChild(v);
    else td.textContent = v === null || v === undefined ? '-' : String(v);
    tr.appendChild(td);
    return tr;
  }

  function emptyRow(cols, text) {
    var tr = el('tr', 'empty');
    var td = el('td', null, text);
    td.colSpan = cols;
    tr.appendChild(td);
    return tr;
  }

  function renderBanners(d) {
    var out = [];
    (d.banners || []).forEach(function (b) {
      var div = el('div', 'banner ' + (b.kind === 'emergency' ||
        b.kind === 'info' ? b.kind : 'warning'));
      div.appendChild(el('p', 'title', b.title));
      div.appendChild(el('p', null, b.text));
      out.push(div);
    });
    fill(document.getElementById('banners'), out);
  }

  function renderSystem(d) {
    var sp;
    if (!d.selfPreservation) sp = 'disabled';
    else if (!d.leaseExpirationEnabled) sp = 'enabled, active (eviction suspended)';
    else sp = 'enabled, not active';
    fill(document.getElementById('system'), [
      kvRow('Environment', d.environment),
      kvRow('Data center', d.datacenter),
      kvRow('Current time', d.currentTime),
      kvRow('Uptime', d.uptime),
      kvRow('Lease expiration enabled', d.leaseExpirationEnabled ? 'true' : 'false'),
      kvRow('Renews threshold', d.renewsThreshold),
      kvRow('Renews (last min)', d.renewsLastMin),
      kvRow('Self-preservation', sp)
    ]);
  }

  function renderReplicas(d) {
    var rows = [];
    (d.replicas || []).forEach(function (r) {
      var tr = el('tr', r.reachable ? 'ok' : 'bad');
      tr.appendChild(el('td', 'url', r.url));
      tr.appendChild(el('td', null, r.reachable ? 'reachable' : 'unreachable'));
      tr.appendChild(el('td', null, r.queueDepth));
      tr.appendChild(el('td', null, iso(r.lastSuccess)));
      tr.appendChild(el('td', null, r.failures));
      tr.appendChild(el('td', null, r.dropped));
      rows.push(tr);
    });
    if (rows.length === 0) rows.push(emptyRow(6, 'No replicas (standalone server)'));
    fill(document.getElementById('replicas'), rows);
  }

  function renderPairs(id, pairs) {
    fill(document.getElementById(id), (pairs || []).map(function (p) {
      return kvRow(p[0], p[1]);
    }));
  }

  /* One instance's detail block, as the server renders it. */
  function instanceBlock(i, app) {
    var div = el('div', 'inst');
    var h = el('h4');
    var link = el('a', null, i.id);
    link.href = instanceHref(app, i.id);
    h.appendChild(link);
    div.appendChild(h);
    if (app) div.appendChild(actionBar(app, i));
    var t = el('table', 'kv');
    var rows = [
      kvRow('Status', i.status),
      kvRow('Overridden status', i.overriddenStatus),
      kvRow('Override in force', i.override || 'none'),
      kvRow('Host', i.hostName),
      kvRow('IP address', i.ipAddr),
      kvRow('Port', i.port + (i.portEnabled ? '' : ' (disabled)')),
      kvRow('Secure port', i.securePort + (i.securePortEnabled ? '' : ' (disabled)')),
      kvRow('Zone', i.zone || '-'),
      kvRow('VIP address', i.vipAddress),
      kvRow('Secure VIP address', i.secureVipAddress)
    ];
    [['Home page', i.homePageUrl], ['Status page', i.statusPageUrl],
     ['Health check', i.healthCheckUrl]].forEach(function (u) {
      rows.push(kvRow(u[0], isHttp(u[1]) ? linkOrText(u[1], u[1]) : (u[1] || '-')));
    });
    rows.push(kvRow('Registered', iso(i.registered)));
    rows.push(kvRow('Last renewal', ago(i.lastRenewal)));
    rows.push(kvRow('Service up', iso(i.serviceUp)));
    rows.push(kvRow('Lease duration', i.duration + ' s (renew every ' +
      i.renewalInterval + ' s)'));
    rows.push(kvRow('Last updated', iso(i.lastUpdated)));
    rows.push(kvRow('Last dirty', iso(i.lastDirty)));
    rows.forEach(function (r) { t.appendChild(r); });
    div.appendChild(t);
    if (i.metadata && i.metadata.length > 0) {
      var m = el('table', 'kv meta');
      m.appendChild(el('caption', null, 'Metadata'));
      i.metadata.forEach(function (p) { m.appendChild(kvRow(p[0], p[1])); });
      div.appendChild(m);
    }
    return div;
  }

  /* The instance page's stable link (a fragment route of the page). */
  function instanceHref(app, id) {
    return base + '#/instance/' + encodeURIComponent(app) + '/' +
      encodeURIComponent(id);
  }

  /*
   * Send one action through the Eureka API, as curl would, with the
   * token this page was given (the server refuses a browser's write
   * without it, or from another origin).
   */
  function act(method, app, id, suffix, what) {
    var out = document.getElementById('action-result');
    var xhr = new XMLHttpRequest();
    xhr.open(method, api + 'apps/' + encodeURIComponent(app) + '/' +
      encodeURIComponent(id) + suffix, true);
    xhr.setRequestHeader('X-Heureka-Token', (lastFeed && lastFeed.token) || '');
    xhr.timeout = POLL_MS;
    xhr.onload = function () {
      var ok = xhr.status >= 200 && xhr.status < 300;
      out.textContent = (ok ? 'Done: ' : 'Refused (' + xhr.status + '): ') +
        what + ' ' + app + '/' + id + (ok ? '' : ' - ' + xhr.responseText);
      out.className = ok ? 'action-ok' : 'action-failed';
      document.body.setAttribute('data-action', ok ? 'ok' : 'failed ' + xhr.status);
      schedule(0);
      if (route()) showInstancePage();
    };
    xhr.onerror = xhr.ontimeout = function () {
      out.textContent = 'No answer: ' + what + ' ' + app + '/' + id;
      out.className = 'action-failed';
      document.body.setAttribute('data-action', 'failed 0');
    };
    xhr.send();
  }

  /* Out of service, back in service, deregister: when the page may act. */
  function actionBar(app, i) {
    var bar = el('div', 'actions');
    if (!lastFeed || !lastFeed.actions) return bar;
    function button(label, cls, fn) {
      var b = el('button', cls, label);
      b.type = 'button';
      b.addEventListener('click', fn);
      bar.appendChild(b);
    }
    if (i.override === 'OUT_OF_SERVICE' || i.status === 'OUT_OF_SERVICE')
      button('Put back in service', 'act-in', function () {
        act('DELETE', app, i.id, '/status', 'override removed from');
      });
    else
      button('Take out of service', 'act-out', function () {
        act('PUT', app, i.id, '/status?value=OUT_OF_SERVICE', 'out of service:');
      });
    button('Deregister', 'act-cancel', function () {
      if (window.confirm('Deregister ' + app + '/' + i.id + '? Its client ' +
          'registers again at its next heartbeat if it is still running.'))
        act('DELETE', app, i.id, '', 'deregistered');
    });
    return bar;
  }

  /* The doctor's findings, newest cause first as the server lists them. */
  function renderDoctor(d) {
    var rows = [];
    var f = (d.doctor && d.doctor.findings) || [];
    f.forEach(function (x) {
      var tr = el('tr', 'finding k-' + x.kind);
      tr.appendChild(el('td', 'kind', x.kind));
      var what = el('td');
      if (x.app && x.id) {
        var a = el('a', null, x.app + '/' + x.id);
        a.href = instanceHref(x.app, x.id);
        what.appendChild(a);
      } else {
        what.textContent = x.app || x.id || 'this node';
      }
      tr.appendChild(what);
      tr.appendChild(el('td', null, x.detail));
      tr.appendChild(el('td', null, ago(x.since)));
      rows.push(tr);
    });
    if (rows.length === 0) rows.push(emptyRow(4, 'Nothing wrong seen'));
    fill(document.getElementById('doctor'), rows);
    var sec = document.getElementById('doctor-section');
    if (sec) sec.classList.toggle('has-findings', f.length > 0);
    document.body.setAttribute('data-doctor', String(f.length));
  }

  /* "#/instance/APP/ID" as [app, id], or null. */
  function route() {
    var m = /^#\/instance\/([^\/]+)\/(.+)$/.exec(window.location.hash);
    if (!m) return null;
    try {
      return [decodeURIComponent(m[1]), decodeURIComponent(m[2])];
    } catch (e) { return null; }
  }

  /* The instance (feed shape) for app and id, or null. */
  function findInstance(app, id) {
    var a = lastFeed && feedApp(app, false);
    if (!a) return null;
    for (var n = 0; n < a.instances.length; n++)
      if (a.instances[n].id === id) return a.instances[n];
    return null;
  }

  /* One audit record as a table row. */
  function auditRow(r) {
    var tr = el('tr', 'audit-' + r.what);
    tr.appendChild(el('td', null, ago(r.time)));
    tr.appendChild(el('td', null, r.what));
    tr.appendChild(el('td', null, r.detail));
    tr.appendChild(el('td', null, r.user + (r.address ? ' from ' + r.address : '')));
    tr.appendChild(el('td', null, r.node + (r.replicated ? ' (replicated here)' : '')));
    return tr;
  }

  /*
   * The instance page: every field, metadata, lease times and the
   * instance's history from the audit. The rest of the page is hidden
   * while it shows; its link is stable (a bookmark, a chat message).
   */
  function showInstancePage() {
    var r = route();
    var page = document.getElementById('instance-page');
    var main = document.getElementById('main-sections');
    if (!page || !main) return;
    if (!r) {
      page.hidden = true;
      main.hidden = false;
      return;
    }
    main.hidden = true;
    page.hidden = false;
    document.getElementById('ip-title').textContent = r[0] + ' / ' + r[1];
    var body = document.getElementById('ip-body');
    var i = findInstance(r[0], r[1]);
    fill(body, i ? [instanceBlock(i, r[0])] :
      [el('p', 'empty', lastFeed ? 'Not registered now (its history is below).' :
        'Loading...')]);
    getJson(api + 'heureka/audit?app=' + encodeURIComponent(r[0]) + '&id=' +
        encodeURIComponent(r[1]) + '&limit=200', function (d) {
      var rows = ((d && d.records) || []).map(auditRow);
      if (rows.length === 0) rows.push(emptyRow(5, d ? 'No changes recorded' :
        'The audit could not be read'));
      fill(document.getElementById('ip-history'), rows);
      document.body.setAttribute('data-instance-page', 'rendered');
    });
  }

  /* Words the filter matches an application row against. */
  function searchText(a) {
    var words = [a.name];
    (a.instances || []).forEach(function (i) {
      words.push(i.id, i.status, i.overriddenStatus || '', i.override || '',
        i.hostName || '', i.ipAddr || '', i.zone || '');
      (i.metadata || []).forEach(function (kv) { words.push(kv[0], kv[1]); });
    });
    (a.zones || []).forEach(function (z) { words.push(z[0]); });
    return words.join(' ').toLowerCase();
  }

  function renderApps(d) {
    var rows = [];
    (d.apps || []).forEach(function (a) {
      var tr = el('tr', 'app');
      tr.setAttribute('data-app', a.name);
      tr.setAttribute('data-search', searchText(a));
      var name = el('td', 'app-name', a.name);
      if (a.leader) name.appendChild(el('div', 'leader', 'leader: ' + a.leader));
      tr.appendChild(name);
      tr.appendChild(el('td', null, 'n/a (' + a.size + ')'));
      tr.appendChild(el('td', null, (a.zones || []).map(function (z) {
        return z[0] + ' (' + z[1] + ')';
      }).join(', ')));
      var td = el('td', 'status');
      STATUS_ORDER.forEach(function (st) {
        var list = (a.instances || []).filter(function (i) { return i.status === st; });
        if (list.length === 0) return;
        var g = el('div', 'group ' + (st === 'UP' ? 'st-up' : 'st-notup'));
        g.appendChild(el('b', null, st + ' (' + list.length + ')'));
        g.appendChild(document.createTextNode(' - '));
        list.forEach(function (i, n) {
          if (n > 0) g.appendChild(document.createTextNode(', '));
          g.appendChild(linkOrText(i.statusPageUrl, i.id));
        });
        td.appendChild(g);
      });
      if (a.instances && a.instances.length > 0) {
        var det = el('details', 'inst-details');
        det.appendChild(el('summary', null, 'Details (' + a.size + ')'));
        a.instances.forEach(function (i) { det.appendChild(instanceBlock(i, a.name)); });
        if (openApps[a.name]) det.open = true;
        det.addEventListener('toggle', function () {
          if (det.open) openApps[a.name] = true;
          else delete openApps[a.name];
        });
        td.appendChild(det);
      }
      tr.appendChild(td);
      rows.push(tr);
    });
    if (rows.length === 0) rows.push(emptyRow(4, 'No instances available'));
    fill(document.getElementById('apps'), rows);
    applyFilter();
  }

  /* Hide application rows that do not match the filter box. */
  function applyFilter() {
    var input = document.getElementById('filter');
    var q = input ? input.value.trim().toLowerCase() : '';
    var rows = document.querySelectorAll('#apps tr.app');
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var hay = rows[i].getAttribute('data-search') ||
        rows[i].textContent.toLowerCase();
      var ok = q === '' || hay.indexOf(q) !== -1;
      rows[i].classList.toggle('hidden', !ok);
      if (ok) shown++;
    }
    var c = document.getElementById('filter-count');
    if (c) c.textContent = q === '' ? '' : shown + ' of ' + rows.length + ' applications';
  }

  /* airlift services: the AIRLIFT-* applications' reserved metadata. */
  function renderAirlift(d) {
    var rows = [];
    (d.apps || []).forEach(function (a) {
      if (String(a.name).indexOf('AIRLIFT-') !== 0) return;
      (a.instances || []).forEach(function (i) {
        var md = {};
        (i.metadata || []).forEach(function (kv) { md[kv[0]] = kv[1]; });
        if (md['airlift.type'] === undefined) return;
        var tr = el('tr', 'airlift');
        [md['airlift.type'], md['airlift.pool'],
         md['airlift.nodeId'] !== undefined ? md['airlift.nodeId'] : '(static)',
         md['airlift.id'], md['airlift.location'], i.status
        ].forEach(function (v) {
          tr.appendChild(el('td', null, v === undefined ? '-' : v));
        });
        rows.push(tr);
      });
    });
    if (rows.length === 0) rows.push(emptyRow(6, 'No airlift announcements'));
    var tb = document.getElementById('airlift-services');
    if (tb) fill(tb, rows);
  }

  function render(d) {
    renderBanners(d);
    renderSystem(d);
    renderReplicas(d);
    renderApps(d);
    renderAirlift(d);
    renderPairs('general', d.general);
    renderPairs('instance', d.instance);
    renderDoctor(d);
    if (route()) showInstancePage();
    var live = document.getElementById('live');
    live.textContent = 'as of ' + d.currentTime + (d.truncated ? ' (list truncated)' : '');
    live.classList.remove('stale');
    document.body.setAttribute('data-feed', 'rendered');
  }

  function stale() {
    var live = document.getElementById('live');
    live.textContent = 'server not answering, retrying...';
    live.classList.add('stale');
  }

  /* The feed's period: slow while the watch stream keeps the table. */
  function pollPeriod() {
    var m = /[?&]refresh=(\d+)/.exec(window.location.search);
    if (!watching) return POLL_MS;
    return m ? Math.max(1, parseInt(m[1], 10)) * 1000 : SLOW_MS;
  }

  /* Schedule the next feed read in ms (replacing a pending one). */
  function schedule(ms) {
    if (pollTimer !== null) clearTimeout(pollTimer);
    pollTimer = setTimeout(poll, ms);
  }

  /* GET url as JSON; cb(object or null). */
  function getJson(url, cb) {
    var xhr = new XMLHttpRequest();
    xhr.open('GET', url, true);
    xhr.timeout = POLL_MS;
    xhr.onload = function () {
      var d = null;
      if (xhr.status === 200) {
        try { d = JSON.parse(xhr.responseText); } catch (e) { d = null; }
      }
      cb(d);
    };
    xhr.onerror = xhr.ontimeout = function () { cb(null); };
    xhr.send();
  }

  function poll() {
    pollTimer = null;
    getJson(feed, function (d) {
      if (d) {
        lastFeed = d;
        render(d);
      } else {
        stale();
      }
      schedule(pollPeriod());
    });
  }

  /* An instance of the watch stream (Eureka's JSON) as the feed has it. */
  function fromEureka(i) {
    var md = [], k, lease = i.leaseInfo || {}, zone = null;
    var dc = i.dataCenterInfo || {};
    for (k in (i.metadata || {})) {
      if (Object.prototype.hasOwnProperty.call(i.metadata, k))
        md.push([k, String(i.metadata[k])]);
    }
    md.sort(function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0; });
    if (dc.name === 'Amazon' && dc.metadata)
      zone = dc.metadata['availability-zone'] || null;
    if (zone === null && i.metadata && i.metadata.zone !== undefined)
      zone = String(i.metadata.zone);
    var port = i.port || {}, sport = i.securePort || {};
    return {
      id: i.instanceId, status: i.status,
      overriddenStatus: i.overriddenStatus || i.overriddenstatus || 'UNKNOWN',
      override: null, hostName: i.hostName, ipAddr: i.ipAddr,
      port: port.$, portEnabled: String(port['@enabled']) === 'true',
      securePort: sport.$,
      securePortEnabled: String(sport['@enabled']) === 'true',
      zone: zone, vipAddress: i.vipAddress, secureVipAddress: i.secureVipAddress,
      homePageUrl: i.homePageUrl, statusPageUrl: i.statusPageUrl,
      healthCheckUrl: i.healthCheckUrl,
      registered: lease.registrationTimestamp,
      /* Eureka's lastRenewalTimestamp is the renewal + the duration. */
      lastRenewal: lease.lastRenewalTimestamp &&
        lease.lastRenewalTimestamp !== lease.registrationTimestamp ?
        lease.lastRenewalTimestamp - (lease.durationInSecs || 0) * 1000 :
        lease.lastRenewalTimestamp,
      serviceUp: lease.serviceUpTimestamp,
      duration: lease.durationInSecs, renewalInterval: lease.renewalIntervalInSecs,
      lastUpdated: Number(i.lastUpdatedTimestamp),
      lastDirty: Number(i.lastDirtyTimestamp), metadata: md
    };
  }

  /* The feed's application entry for name, made when missing. */
  function feedApp(name, create) {
    var apps = lastFeed.apps || (lastFeed.apps = []);
    for (var n = 0; n < apps.length; n++)
      if (apps[n].name === name) return apps[n];
    if (!create) return null;
    var a = { name: name, size: 0, zones: [], instances: [] };
    apps.push(a);
    apps.sort(function (x, y) { return x.name < y.name ? -1 : x.name > y.name ? 1 : 0; });
    return a;
  }

  /* Recount an application's size and zones after a change. */
  function recount(a) {
    var z = {}, order = [];
    a.size = a.instances.length;
    a.instances.forEach(function (i) {
      if (!i.zone) return;
      if (z[i.zone] === undefined) { z[i.zone] = 0; order.push(i.zone); }
      z[i.zone]++;
    });
    a.zones = order.sort().map(function (k) { return [k, z[k]]; });
  }

  /* Apply one watch event to the table. */
  function onEvent(kind, e) {
    var d, inst, a, n;
    if (lastFeed === null) return;
    try { d = JSON.parse(e.data); } catch (x) { return; }
    inst = d && d.instance;
    if (!inst) return;
    if (kind === 'LEADER') {
      /* An empty instance: the app has no leader now. */
      a = feedApp(inst.app, false);
      if (a) a.leader = inst.instanceId || null;
    } else {
      a = feedApp(inst.app, kind !== 'DELETED');
      if (!a) return;
      for (n = 0; n < a.instances.length; n++)
        if (a.instances[n].id === inst.instanceId) break;
      if (kind === 'DELETED') {
        if (n < a.instances.length) a.instances.splice(n, 1);
        if (a.instances.length === 0)
          lastFeed.apps.splice(lastFeed.apps.indexOf(a), 1);
      } else {
        a.instances[n] = fromEureka(inst);
      }
      if (a.instances.length > 0) recount(a);
    }
    renderApps(lastFeed);
    renderAirlift(lastFeed);
    if (route()) showInstancePage();
    document.body.setAttribute('data-watch-events',
      String(Number(document.body.getAttribute('data-watch-events') || 0) + 1));
  }

  /*
   * Open the watch stream. The snapshot it starts with (ADDED... SYNCED)
   * is skipped: the feed just read is the same registry. Any error or a
   * RESET closes it; the feed goes back to its fast period and the stream
   * is reopened after RETRY_MS.
   */
  function watch() {
    var es, synced = false;
    if (typeof EventSource === 'undefined') return;
    try { es = new EventSource(api + 'heureka/watch'); } catch (x) { return; }
    function down() {
      es.close();
      if (watching) {
        watching = false;
        document.body.setAttribute('data-watch', 'off');
        schedule(0);
      }
      setTimeout(watch, RETRY_MS);
    }
    es.addEventListener('SYNCED', function () {
      synced = true;
      watching = true;
      document.body.setAttribute('data-watch', 'on');
      /* Re-read the feed once: changes during the snapshot are in it. */
      schedule(0);
    });
    ['ADDED', 'MODIFIED', 'DELETED', 'LEADER'].forEach(function (k) {
      es.addEventListener(k, function (e) { if (synced) onEvent(k, e); });
    });
    es.addEventListener('RESET', down);
    es.onerror = down;
  }

  /* An SVG element with attributes. */
  function svg(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs)
      if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    return e;
  }

  /*
   * One line chart: series is [{name, cls, values}], values null where
   * unknown; times are the samples' wall clock (ms). Drawn as SVG with
   * classes only (the CSP forbids inline style).
   */
  function chart(title, unit, times, series) {
    var W = 600, H = 140, L = 44, R = 8, T = 10, B = 22;
    var max = 0, fig = el('figure', 'chart');
    series.forEach(function (s) {
      s.values.forEach(function (v) { if (v !== null && v > max) max = v; });
    });
    if (max <= 0) max = 1;
    var t0 = times.length ? times[0] : 0;
    var t1 = times.length ? times[times.length - 1] : 1;
    var span = t1 > t0 ? t1 - t0 : 1;
    var g = svg('svg', { 'class': 'chart', viewBox: '0 0 ' + W + ' ' + H,
      role: 'img', 'aria-label': title, 'data-samples': String(times.length) });
    g.appendChild(svg('line', { 'class': 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }));
    g.appendChild(svg('line', { 'class': 'axis', x1: L, y1: T, x2: L, y2: H - B }));
    var ytop = svg('text', { 'class': 'tick', x: L - 4, y: T + 8, 'text-anchor': 'end' });
    ytop.textContent = String(Math.round(max * 10) / 10);
    g.appendChild(ytop);
    var y0 = svg('text', { 'class': 'tick', x: L - 4, y: H - B, 'text-anchor': 'end' });
    y0.textContent = '0';
    g.appendChild(y0);
    if (times.length) {
      var tl = svg('text', { 'class': 'tick', x: L, y: H - 6 });
      tl.textContent = iso(t0).substr(11, 5);
      g.appendChild(tl);
      var tr = svg('text', { 'class': 'tick', x: W - R, y: H - 6, 'text-anchor': 'end' });
      tr.textContent = iso(t1).substr(11, 5) + ' UTC';
      g.appendChild(tr);
    }
    var legend = el('figcaption', null, title + (unit ? ' (' + unit + ')' : '') + ': ');
    series.forEach(function (s) {
      var pts = [];
      s.values.forEach(function (v, n) {
        if (v === null) return;
        var x = L + (times.length > 1 ? (times[n] - t0) / span : 0) * (W - L - R);
        var y = H - B - (v / max) * (H - T - B);
        pts.push(x.toFixed(1) + ',' + y.toFixed(1));
      });
      var line = svg('polyline', { 'class': 'series ' + s.cls, points: pts.join(' '),
        'data-series': s.name });
      g.appendChild(line);
      var last = null;
      for (var n = s.values.length - 1; n >= 0 && last === null; n--) last = s.values[n];
      legend.appendChild(el('span', 'key ' + s.cls, s.name + ' ' +
        (last === null ? '-' : String(Math.round(last * 10) / 10))));
    });
    fig.appendChild(g);
    fig.appendChild(legend);
    return fig;
  }

  /* The charts from history.json. */
  function renderCharts(h) {
    var box = document.getElementById('charts');
    if (!box || !h || !h.samples) return;
    var s = h.samples, per = 60000 / (h.intervalMs || 60000);
    var times = s.map(function (x) { return x.at; });
    function col(f) { return s.map(f); }
    var out = [chart('Lease activity', 'per minute', times, [
      { name: 'renewals', cls: 's-renew', values: col(function (x) { return x.renewals * per; }) },
      { name: 'registrations', cls: 's-reg', values: col(function (x) { return x.registrations * per; }) },
      { name: 'cancels', cls: 's-cancel', values: col(function (x) { return x.cancels * per; }) },
      { name: 'threshold', cls: 's-threshold', values: col(function (x) { return x.threshold; }) }
    ])];
    var peers = h.peers || [];
    if (peers.length > 0) {
      var lag = [], depth = [];
      peers.forEach(function (url, p) {
        var cls = 's-peer' + (p % 4);
        lag.push({ name: url, cls: cls, values: col(function (x) {
          var q = x.peers[p];
          return q && q.lagMs >= 0 ? q.lagMs / 1000 : null;
        }) });
        depth.push({ name: url, cls: cls, values: col(function (x) {
          var q = x.peers[p];
          return q ? q.queueDepth : null;
        }) });
      });
      out.push(chart('Replication lag', 's since last success', times, lag));
      out.push(chart('Replication queue depth', 'tasks', times, depth));
    }
    fill(box, out);
    document.body.setAttribute('data-charts', String(s.length));
  }

  /* Read the history now and again every sample interval (at most 1/min). */
  function history() {
    getJson(historyUrl, function (h) {
      var ms = 60000;
      if (h) {
        renderCharts(h);
        if (h.intervalMs > 0) ms = Math.max(1000, Math.min(ms, h.intervalMs));
      }
      setTimeout(history, ms);
    });
  }

  function start() {
    var box = document.getElementById('filter-box');
    var input = document.getElementById('filter');
    if (!box || !input) return;
    /* Remember which detail blocks the user opened across refreshes. */
    var dets = document.querySelectorAll('#apps details.inst-details');
    for (var i = 0; i < dets.length; i++) {
      (function (det) {
        det.addEventListener('toggle', function () {
          var row = det.closest('tr.app');
          var name = row ? row.getAttribute('data-app') : null;
          if (name === null) return;
          if (det.open) openApps[name] = true; else delete openApps[name];
        });
      })(dets[i]);
    }
    box.hidden = false;
    input.addEventListener('input', applyFilter);
    window.addEventListener('hashchange', showInstancePage);
    showInstancePage();
    poll();
    watch();
    history();
  }

  if (document.readyState === 'loading')
    document.addEventListener('DOMContentLoaded', start);
  else
    start();
})();
