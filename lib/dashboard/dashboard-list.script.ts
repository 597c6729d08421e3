/**
 * @internal The list view: the queues (workers, "no consumer", totals by state) and the
 * tenants, one group per tenant with a row per queue, filtered live by the search box (`?q=`)
 * and by `?queue=`. Tenant names link to the tenant's own view (`?tenant=`).
 */
export const DASHBOARD_LIST_SCRIPT = String.raw`
  var listData = null;
  function sum(rows, pick) { return rows.reduce(function (n, r) { return n + pick(r); }, 0); }
  function attemptFailures(r) { return r.results.failed + r.results.timedOut; }
  function renderQueues(summaries) {
    return table(['Queue', 'Workers (all processes)', 'Waiting', 'Active', 'Delayed', 'Failed', ''],
      summaries.map(function (q) {
        return el('tr', { 'data-testid': 'queue-summary', 'data-queue': q.queue },
          el('td', {}, link(q.queue, { queue: q.queue }), q.poolOf ? el('span', { className: 'muted', text: ' pool of ' + q.poolOf }) : ''),
          num(q.workers === null ? '?' : q.workers, 'workers'),
          num(q.counts.waiting + q.counts.prioritized), num(q.counts.active),
          num(q.counts.delayed), num(q.counts.failed),
          el('td', {}, q.noConsumer
            ? el('span', { className: 'badge paused', 'data-testid': 'no-consumer', text: 'no consumer', title: 'Producers enqueue here but no worker consumes this queue in any process' })
            : (q.fair ? el('span', { className: 'badge', text: 'fair gate' }) : '')));
      }), { 'data-testid': 'queues' });
  }
  function groupRows(tenantId, rows, win) {
    var worst = rows.reduce(function (a, b) { return b.currentLagMs > a.currentLagMs ? b : a; });
    var head = el('tr', { className: 'group', 'data-testid': 'tenant-row', 'data-tenant': tenantId },
      el('td', {}, link(tenantId, { tenant: tenantId }, 'tenant-link')),
      el('td', { className: 'muted', text: rows.length === 1 ? '1 queue' : rows.length + ' queues' }),
      el('td', { className: 'num' + (worst.currentLagMs >= 10000 ? ' late' : ''), 'data-testid': 'lag', text: ms(worst.currentLagMs) }),
      el('td', { className: 'num', text: ms(worst.lag.p95) + ' (p95, ' + worst.queue + ')' }),
      num(sum(rows, function (r) { return r.backlog; }), 'backlog'),
      num(sum(rows, function (r) { return r.inFlight; }), 'in-flight'),
      num(sum(rows, function (r) { return r.results.completed; })),
      num(sum(rows, attemptFailures)),
      num(sum(rows, function (r) { return r.results.deadLettered; }), 'final-failures'),
      num(sum(rows, function (r) { return r.deadLetters; })),
      el('td', {}, state({ paused: rows.some(function (r) { return r.paused; }), slowLane: rows.some(function (r) { return r.slowLane; }), rateLimited: rows.some(function (r) { return r.rateLimited; }) })));
    var subs = rows.map(function (s) {
      return el('tr', { className: 'sub', 'data-testid': 'queue-row', 'data-tenant': s.tenantId, 'data-queue': s.queue },
        el('td', {}),
        el('td', {}, link(s.queue, { tenant: s.tenantId, queue: s.queue })),
        el('td', { className: 'num' + (s.currentLagMs >= 10000 ? ' late' : ''), text: ms(s.currentLagMs) }),
        el('td', { className: 'num', text: ms(s.lag.p50) + ' / ' + ms(s.lag.p95) + ' / ' + ms(s.lag.p99) }),
        num(s.backlog, 'backlog'), num(s.inFlight, 'in-flight'), num(s.results.completed),
        num(attemptFailures(s)), num(s.results.deadLettered), num(s.deadLetters),
        el('td', { 'data-testid': 'state' }, state(s)));
    });
    return el('tbody', { 'data-testid': 'tenant-group', 'data-tenant': tenantId }, head, ...subs);
  }
  function drawList() {
    var data = listData;
    var q = (params.get('q') || '').toLowerCase();
    var groups = new Map();
    data.tenants.forEach(function (s) {
      if (!groups.has(s.tenantId)) groups.set(s.tenantId, []);
      groups.get(s.tenantId).push(s);
    });
    var all = Array.from(groups.keys());
    var shown = all.filter(function (id) {
      return !q || id.toLowerCase().indexOf(q) >= 0 || groups.get(id).some(function (s) { return s.queue.toLowerCase().indexOf(q) >= 0; });
    });
    var win = data.tenants.length ? data.tenants[0].lag.windowMinutes : null;
    var w = win ? ' (last ' + win + ' min)' : '';
    var heading = ['Tenant', 'Queue', 'Lag now', 'Lag p50 / p95 / p99' + w, 'Backlog (now)', 'In flight (now)',
      'Completed' + w, 'Attempt failures' + w, 'Failed for good' + w, 'Dead letters (kept)', 'State'];
    var filter = params.get('queue') ? ' on queue ' + params.get('queue') : '';
    var count = shown.length === all.length ? all.length + ' tenants' + filter : shown.length + ' of ' + all.length + ' tenants' + filter;
    var tenants = el('table', { id: 'tenants', 'data-testid': 'tenants' },
      el('thead', {}, el('tr', {}, ...heading.map(function (h) { return el('th', { text: h }); }))),
      ...shown.map(function (id) { return groupRows(id, groups.get(id), win); }));
    document.getElementById('view').replaceChildren(
      el('h2', { text: 'Queues' }), renderQueues(data.queueSummaries),
      el('h2', {}, 'Tenants ', el('span', { className: 'muted', 'data-testid': 'tenant-count', text: count }),
        params.get('queue') ? link(' \u00d7 all queues', { q: params.get('q') }) : ''),
      tenants, all.length ? '' : el('p', { 'data-testid': 'empty', text: 'No tenant activity recorded yet.' }),
      all.length && !shown.length ? el('p', { 'data-testid': 'no-match', text: 'No tenant or queue matches \u201c' + q + '\u201d.' }) : '');
  }
  async function renderList() {
    var queue = params.get('queue');
    listData = await api('/tenants' + (queue ? '?queue=' + enc(queue) : ''));
    cfg.controls = listData.controls;
    drawList();
  }
  var search = document.getElementById('search');
  search.value = params.get('q') || '';
  search.addEventListener('input', function () {
    if (search.value) params.set('q', search.value); else params.delete('q');
    history.replaceState(null, '', href(Object.fromEntries(params)));
    if (listData && !params.get('tenant') && !params.get('job')) drawList();
  });
`;
