/**
 * @internal Inline script of the dashboard page: fetches the JSON endpoints, renders with
 * `textContent` only (never `innerHTML`), refreshes itself, and posts pause/resume.
 */
export const DASHBOARD_SCRIPT = `
(function () {
  'use strict';
  var cfg = JSON.parse(document.getElementById('config').textContent);
  var selected = null;
  var timer = null;
  function el(tag, props) {
    var node = document.createElement(tag);
    var children = Array.prototype.slice.call(arguments, 2);
    Object.keys(props || {}).forEach(function (key) {
      var value = props[key];
      if (key === 'text') node.textContent = value;
      else if (key === 'className') node.className = value;
      else if (key.indexOf('on') === 0) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    });
    children.forEach(function (child) {
      node.append(child instanceof Node ? child : String(child));
    });
    return node;
  }
  function ms(value) {
    if (value === null || value === undefined) return '\\u2013';
    if (value < 1000) return value + ' ms';
    if (value < 60000) return (value / 1000).toFixed(1) + ' s';
    return (value / 60000).toFixed(1) + ' min';
  }
  function status(text) { document.getElementById('status').textContent = text; }
  function failures(r) { return r.failed + r.timedOut + r.cancelled + r.deadLettered; }
  function state(s) {
    if (s.paused) return el('span', { className: 'badge paused', text: 'paused' });
    if (s.slowLane) return el('span', { className: 'badge slow', text: 'slow lane' });
    if (s.rateLimited) return el('span', { className: 'badge slow', text: 'rate limited' });
    return el('span', { className: 'badge', text: 'active' });
  }
  async function api(path, init) {
    var response = await fetch(cfg.base + '/api' + path, Object.assign({ credentials: 'same-origin' }, init || {}));
    if (!response.ok) throw new Error('HTTP ' + response.status);
    return response.json();
  }
  function action(s) {
    if (!cfg.controls) return '';
    var verb = s.paused ? 'resume' : 'pause';
    return el('button', {
      'data-testid': verb,
      text: s.paused ? 'Resume' : 'Pause',
      onclick: async function () {
        try {
          var headers = {};
          headers[cfg.actionHeader] = '1';
          await api('/queues/' + encodeURIComponent(s.queue) + '/tenants/' + encodeURIComponent(s.tenantId) + '/' + verb, { method: 'POST', headers: headers });
          status(verb === 'pause' ? 'Paused ' + s.tenantId : 'Resumed ' + s.tenantId);
        } catch (error) {
          status('Could not ' + verb + ' ' + s.tenantId + ': ' + error.message);
        }
        refresh();
      },
    });
  }
  function row(s) {
    return el('tr', { 'data-testid': 'tenant-row', 'data-tenant': s.tenantId, 'data-queue': s.queue },
      el('td', {}, el('button', { className: 'link', text: s.tenantId, onclick: function () { selected = s.tenantId; refresh(); } })),
      el('td', { text: s.queue }),
      el('td', { className: 'num' + (s.currentLagMs >= 10000 ? ' late' : ''), 'data-testid': 'lag', text: ms(s.currentLagMs) }),
      el('td', { className: 'num', text: ms(s.lag.p50) + ' / ' + ms(s.lag.p95) + ' / ' + ms(s.lag.p99) }),
      el('td', { className: 'num', 'data-testid': 'backlog', text: s.backlog }),
      el('td', { className: 'num', 'data-testid': 'in-flight', text: s.inFlight }),
      el('td', { className: 'num', text: failures(s.results) }),
      el('td', { className: 'num', text: s.deadLetters }),
      el('td', { 'data-testid': 'state' }, state(s)),
      el('td', {}, action(s)));
  }
  function table(headings, rows) {
    return el('table', {},
      el('thead', {}, el('tr', {}, ...headings.map(function (h) { return el('th', { text: h }); }))),
      el('tbody', {}, ...rows));
  }
  function renderDetail(d) {
    var box = document.getElementById('detail');
    box.replaceChildren(
      el('h2', { text: 'Tenant ' + d.tenantId }),
      table(['Queue', 'Backlog', 'In flight', 'Oldest waiting', 'Lag p95', 'Completed', 'Failed', 'Timed out', 'Cancelled', 'Dead-lettered', 'State'],
        d.queues.map(function (q) {
          return el('tr', {}, el('td', { text: q.queue }), el('td', { className: 'num', text: q.backlog }),
            el('td', { className: 'num', text: q.inFlight }), el('td', { className: 'num', text: ms(q.oldestWaitingMs) }),
            el('td', { className: 'num', text: ms(q.lag.p95) }), el('td', { className: 'num', text: q.results.completed }),
            el('td', { className: 'num', text: q.results.failed }), el('td', { className: 'num', text: q.results.timedOut }),
            el('td', { className: 'num', text: q.results.cancelled }), el('td', { className: 'num', text: q.results.deadLettered }),
            el('td', {}, state(q)));
        })),
      el('h3', { text: 'Recent dead letters (' + d.deadLetters.total + ')' }),
      table(['Failed at', 'Queue', 'Job', 'Reason', 'Attempts', 'Message'],
        d.deadLetters.items.map(function (l) {
          return el('tr', { 'data-testid': 'dead-letter' }, el('td', { text: l.failedAt }), el('td', { text: l.queue }),
            el('td', { text: l.name + ' (' + l.jobId + ')' }), el('td', { text: l.reason }),
            el('td', { className: 'num', text: l.attempts }), el('td', { className: 'wrap', text: l.failedReason }));
        })),
      el('h3', { text: 'Schedules (' + d.schedules.length + ')' }),
      table(['Key', 'Cron', 'Time zone', 'Job', 'Enabled', 'Next run'],
        d.schedules.map(function (s) {
          return el('tr', { 'data-testid': 'schedule' }, el('td', { text: s.key }), el('td', { text: s.cron }),
            el('td', { text: s.timezone }), el('td', { text: s.queue + ' / ' + s.job }),
            el('td', { text: s.enabled ? 'yes' : 'no' }), el('td', { text: s.nextRunAt || '\\u2013' }));
        })));
    box.hidden = false;
  }
  async function load() {
    try {
      var data = await api('/tenants');
      cfg.controls = data.controls;
      document.querySelector('#tenants tbody').replaceChildren(...data.tenants.map(row));
      document.getElementById('empty').hidden = data.tenants.length > 0;
      if (selected) renderDetail(await api('/tenants/' + encodeURIComponent(selected)));
      status('Updated ' + new Date().toLocaleTimeString() + ' \\u00b7 refreshes every ' + cfg.refreshMs / 1000 + ' s');
    } catch (error) {
      status('Could not load: ' + error.message);
    }
  }
  function refresh() {
    clearTimeout(timer);
    load().finally(function () {
      clearTimeout(timer);
      timer = setTimeout(refresh, cfg.refreshMs);
    });
  }
  refresh();
})();
`;
