/*
 * heureka dashboard: refreshes the server-rendered page in place from
 * heureka-assets/status.json every few seconds, and filters the instance
 * table. Every value is attacker-controlled (app names, ids, metadata), so
 * the DOM is built with createElement/textContent only, never innerHTML,
 * and only http(s) URLs become links.
 */
'use strict';
(function () {
  var POLL_MS = 5000;
  var base = document.body.getAttribute('data-base') || '/';
  var feed = base + 'heureka-assets/status.json';
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
  function instanceBlock(i) {
    var div = el('div', 'inst');
    div.appendChild(el('h4', null, i.id));
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
    rows.push(kvRow('Last renewal', iso(i.lastRenewal)));
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

  /* Words the filter matches an application row against. */
  function searchText(a) {
    var words = [a.name];
    (a.instances || []).forEach(function (i) {
      words.push(i.id, i.status, i.hostName || '', i.ipAddr || '');
    });
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
        a.instances.forEach(function (i) { det.appendChild(instanceBlock(i)); });
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
    var live = document.getElementById('live');
    live.textContent = 'as of ' + d.currentTime + (d.truncated ? ' (list truncated)' : '');
    live.classList.remove('stale');
  }

  function stale() {
    var live = document.getElementById('live');
    live.textContent = 'server not answering, retrying...';
    live.classList.add('stale');
  }

  function poll() {
    var xhr = new XMLHttpRequest();
    xhr.open('GET', feed, true);
    xhr.timeout = POLL_MS;
    xhr.onload = function () {
      var d = null;
      if (xhr.status === 200) {
        try { d = JSON.parse(xhr.responseText); } catch (e) { d = null; }
      }
      if (d) render(d); else stale();
      setTimeout(poll, POLL_MS);
    };
    xhr.onerror = xhr.ontimeout = function () {
      stale();
      setTimeout(poll, POLL_MS);
    };
    xhr.send();
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
    poll();
  }

  if (document.readyState === 'loading')
    document.addEventListener('DOMContentLoaded', start);
  else
    start();
})();
