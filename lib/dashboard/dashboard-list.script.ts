/**
 * @internal The list view: the queues (workers, "no consumer", totals by state) and the
 * tenants, one group per tenant with a row per queue, filtered live by the search box (`?q=`)
 * and by `?queue=`. Tenant names link to the tenant's own view (`?tenant=`).
 */
export const DASHBOARD_LIST_SCRIPT = String.raw`
  var listData = null;
  function sum(rows, pick) { return rows.reduce(function (n, r) { return n + pick(r); }, 0); }
  function attemptFailures(r) { return r.results.failed + r.results.timedOut; }
  function summaryRow(q) {
    return el('tr', { 'data-testid': 'queue-summary', 'data-queue': q.queue },
      el('td', {}, link(q.queue, { queue: q.queue }), q.poolOf ? el('span', { className: 'muted', text: ' pool of ' + q.poolOf }) : ''),
      num(q.workers === null ? '?' : q.workers, 'workers'),
      num(q.counts.waiting + q.counts.prioritized, 'waiting'), num(q.counts.active, 'active'),
      num(q.counts.delayed, 'delayed'), num(q.counts.failed, 'failed'),
      el('td', {}, q.noConsumer
        ? el('span', { className: 'badge paused', 'data-testid': 'no-consumer', text: 'no consumer', title: 'Producers enqueue here but no worker consumes this queue in any process' })
        : (q.fair ? el('span', { className: 'badge', text: 'fair gate' }) : '')));
  }
  var QUEUE_HEADS = ['Queue', 'Workers (all processes)', 'Waiting', 'Active', 'Delayed', 'Failed', ''];
  /** The app's queues, then the module's own (the scheduler's) folded away. */
  function renderQueues(summaries, internal) {
    var own = summaries.filter(function (q) { return internal.indexOf(q.queue) < 0; });
    var theirs = summaries.filter(function (q) { return internal.indexOf(q.queue) >= 0; });
    return el('div', {}, table(QUEUE_HEADS, own.map(summaryRow), { 'data-testid': 'queues' }),
      theirs.length ? el('details', { 'data-testid': 'internal-queues' },
        el('summary', { className: 'muted', text: theirs.length + ' internal queue(s) of the scheduler: ' + theirs.map(function (q) { return q.queue; }).join(', ') }),
        table(QUEUE_HEADS, theirs.map(summaryRow))) : '');
  }
  function unconsumed(queue) {
    return listData.queueSummaries.some(function (q) { return q.queue === queue && q.noConsumer; });
  }
  function live(rows) { return rows.filter(function (r) { return r.backlog > 0; }); }
  function groupRows(tenantId, rows, win) {
    var waiting = live(rows);
    var worst = (waiting.length ? waiting : rows).reduce(function (a, b) { return b.currentLagMs > a.currentLagMs ? b : a; });
    var slowest = rows.reduce(function (a, b) { return (b.lag.p95 || 0) > (a.lag.p95 || 0) ? b : a; });
    var oldest = rows.reduce(function (a, b) { return b.oldestWaitingMs > a.oldestWaitingMs ? b : a; });
    var paused = rows.filter(function (r) { return r.paused; });
    var limited = rows.filter(function (r) { return r.rateLimited; });
    var head = el('tr', { className: 'group', 'data-testid': 'tenant-row', 'data-tenant': tenantId },
      el('td', {}, link(tenantId, { tenant: tenantId }, 'tenant-link')),
      el('td', { className: 'muted', text: rows.length === 1 ? '1 queue' : rows.length + ' queues' }),
      el('td', {}, state({ paused: paused.length > 0, pausedAt: paused.length ? Math.min.apply(null, paused.map(function (r) { return r.pausedAt || Infinity; })) : null,
        slowLane: rows.some(function (r) { return r.slowLane; }), rateLimited: limited.length > 0,
        oldestWaitingMs: limited.length ? Math.max.apply(null, limited.map(function (r) { return r.oldestWaitingMs; })) : 0, rateLimitedUntil: null })),
      lagCell(worst, 'lag'), oldestCell(oldest, 'oldest'),
      el('td', { className: 'num', text: slowest.lag.p95 === null ? '\u2013' : ms(slowest.lag.p95) + ' (p95, ' + slowest.queue + ')' }),
      num(sum(rows, function (r) { return r.backlog; }), 'backlog'),
      num(sum(rows, function (r) { return r.inFlight; }), 'in-flight'),
      num(sum(rows, function (r) { return r.results.completed; })),
      num(sum(rows, attemptFailures)),
      num(sum(rows, function (r) { return r.results.deadLettered; }), 'final-failures'),
      num(sum(rows, function (r) { return r.deadLetters; })));
    var subs = rows.map(function (s) {
      return el('tr', { className: 'sub', 'data-testid': 'queue-row', 'data-tenant': s.tenantId, 'data-queue': s.queue },
        el('td', {}),
        el('td', {}, link(s.queue, { tenant: s.tenantId, queue: s.queue })),
        el('td', { 'data-testid': 'state' }, state(s), s.backlog && unconsumed(s.queue)
          ? el('span', { className: 'badge paused', 'data-testid': 'why-waiting', text: 'no consumer', title: 'No worker consumes ' + s.queue + ' in any process' }) : ''),
        lagCell(s, 'lag'), oldestCell(s, 'oldest'),
        el('td', { className: 'num', text: ms(s.lag.p50) + ' / ' + ms(s.lag.p95) + ' / ' + ms(s.lag.p99) }),
        num(s.backlog, 'backlog'), num(s.inFlight, 'in-flight'), num(s.results.completed),
        num(attemptFailures(s)), num(s.results.deadLettered), num(s.deadLetters));
    });
    return el('tbody', { 'data-testid': 'tenant-group', 'data-tenant': tenantId }, head, ...subs);
  }
  function drawList() {
    var data = listData;
    var q = (params.get('q') || '').toLowerCase();
    var internal = data.internalQueues || [];
    var groups = new Map();
    data.tenants.forEach(function (s) {
      // The scheduler's own queues are folded away with the queue list (their jobs run the app's crons).
      if (internal.indexOf(s.queue) >= 0 && !s.backlog && !s.inFlight && !s.deadLetters) return;
      if (!groups.has(s.tenantId)) groups.set(s.tenantId, []);
      groups.get(s.tenantId).push(s);
    });
    var all = Array.from(groups.keys());
    var shown = all.filter(function (id) {
      return !q || id.toLowerCase().indexOf(q) >= 0 || groups.get(id).some(function (s) { return s.queue.toLowerCase().indexOf(q) >= 0; });
    });
    var win = data.tenants.length ? data.tenants[0].lag.windowMinutes : null;
    var w = win ? ' (last ' + win + ' min)' : '';
    var heading = ['Tenant', 'Queue', 'State', 'Lag now', 'Oldest waiting (now)', 'Lag p50 / p95 / p99' + w, 'Backlog (now)', 'In flight (now)',
      'Completed' + w, 'Attempt failures' + w, 'Failed for good' + w, 'Dead letters (kept)'];
    var filter = params.get('queue') ? ' on queue ' + params.get('queue') : '';
    // The inspector lists up to the limit per queue: the largest lag among the most recently
    // active tenants and those whose jobs have waited longest.
    var perQueue = new Map();
    data.tenants.forEach(function (s) { perQueue.set(s.queue, (perQueue.get(s.queue) || 0) + 1); });
    if (Array.from(perQueue.values()).some(function (n) { return n >= data.limit; })) filter += ' (per queue, the ' + count(data.limit) + ' with the largest lag among the most recently active and the longest waiting)';
    var total = shown.length === all.length ? count(all.length) + ' tenants' : count(shown.length) + ' of ' + count(all.length) + ' tenants';
    var tenants = alignHeads(el('table', { id: 'tenants', 'data-testid': 'tenants' },
      el('thead', {}, el('tr', {}, ...heading.map(function (h) { return el('th', { text: h }); }))),
      ...shown.map(function (id) { return groupRows(id, groups.get(id), win); })));
    var internalCount = data.queueSummaries.filter(function (s) { return internal.indexOf(s.queue) >= 0; }).length;
    document.getElementById('view').replaceChildren(
      el('h2', {}, 'Tenants ', el('span', { className: 'muted', 'data-testid': 'tenant-count', text: total + filter }),
        params.get('queue') ? link(' \u00d7 all queues', { q: params.get('q') }) : ''),
      tenants, all.length ? '' : el('p', { 'data-testid': 'empty', text: 'No tenant activity recorded yet.' }),
      all.length && !shown.length ? el('p', { 'data-testid': 'no-match', text: 'No tenant or queue matches \u201c' + q + '\u201d.' }) : '',
      el('h2', {}, 'Queues ', el('span', { className: 'muted', text: count(data.queueSummaries.length - internalCount) + (internalCount ? ' + ' + internalCount + ' internal' : '') })),
      renderQueues(data.queueSummaries, internal));
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
