/**
 * @internal The tenant view (`?tenant=`, `?queue=` picks the queue of the chart and job list)
 * and the job search (`?job=`). Figures and chart refresh on the timer; the job list reloads
 * when asked (a tab, an action), so a refresh never takes away what is being read.
 */
export const DASHBOARD_TENANT_SCRIPT = String.raw`
  var built = null;
  var jobState = 'gate';
  function explainBox(x) {
    var place = x.gate;
    var facts = [['State', x.state], ['Queue', x.queue], ['Held by', x.holds.length ? x.holds.join(', ') : 'nothing']];
    if (place) {
      facts.push(['Place in backlog', (place.backlogPosition + 1) + ' of ' + place.backlogLength + (place.lane ? ' (lane ' + place.lane + ')' : '')]);
      facts.push(['Turn order', place.turnPosition === null ? 'out of turn' : (place.turnPosition + 1) + ' of ' + place.tenantsInTurn]);
      facts.push(['In flight / cap', place.inFlight + ' / ' + (place.concurrency || 'none')]);
      facts.push(['Weight', place.weight]);
      facts.push(['Gate window', place.admitted + ' admitted of ' + place.window]);
      if (place.rateLimitedUntil) facts.push(['Rate-limited until', when(place.rateLimitedUntil)]);
    }
    if (x.delayedUntil) facts.push(['Due at', when(x.delayedUntil)]);
    if (x.workers !== null && x.workers !== undefined) facts.push(['Workers', x.workers]);
    return el('div', { className: 'explain', 'data-testid': 'explain' },
      el('p', { className: 'summary', 'data-testid': 'explain-summary', text: localTimes(x.summary) }),
      el('dl', {}, ...facts.flatMap(function (f) { return [el('dt', { text: f[0] }), el('dd', { text: String(f[1]) })]; })));
  }
  async function explainInto(cell, queue, tenantId, id) {
    try { cell.replaceChildren(explainBox(await api('/queues/' + enc(queue) + '/tenants/' + enc(tenantId) + '/jobs/' + enc(id) + '/explain'))); }
    catch (error) { cell.replaceChildren(el('p', { className: 'late', text: 'Could not explain: ' + error.message })); }
  }
  function jobRow(list, job, cols) {
    var t = list.tenantId, q = list.queue;
    var more = el('td', { colspan: cols, className: 'wrap' });
    var extra = el('tr', { className: 'more', hidden: 'hidden' }, more);
    var buttons = [];
    if (['gate', 'waiting', 'delayed'].indexOf(job.state) >= 0) {
      buttons.push(el('button', { 'data-testid': 'explain-button', text: 'Why waiting?', onclick: function () { extra.hidden = false; explainInto(more, q, t, job.id); } }));
    }
    if (job.state === 'failed') {
      buttons.push(el('button', { 'data-testid': 'retry', text: 'Retry', onclick: async function () {
        if (await act('retry ' + job.id, '/queues/' + enc(q) + '/tenants/' + enc(t) + '/jobs/' + enc(job.id) + '/retry')) loadJobs(q, t);
      } }));
    }
    if (job.state === 'dead-letters') {
      buttons.push(el('button', { 'data-testid': 'replay', text: 'Replay', onclick: async function () {
        if (await act('replay ' + job.id, '/queues/' + enc(q) + '/tenants/' + enc(t) + '/dead-letters/' + enc(job.id) + '/replay')) loadJobs(q, t);
      } }));
      buttons.push(el('button', { 'data-testid': 'purge', text: 'Purge', onclick: async function () {
        if (await act('purge ' + job.id, '/queues/' + enc(q) + '/tenants/' + enc(t) + '/dead-letters/purge?jobId=' + enc(job.id))) loadJobs(q, t);
      } }));
    }
    var row = el('tr', { 'data-testid': 'job', 'data-job': job.id },
      el('td', { className: 'id', text: job.id }), el('td', { text: job.name }), num(job.attempts),
      el('td', { className: 'time', 'data-testid': 'enqueued-at', text: when(job.enqueuedAt) }),
      el('td', { className: 'time', 'data-testid': 'started-at', text: when(job.startedAt) }),
      el('td', { className: 'time', 'data-testid': 'ended-at', text: when(job.endedAt) }),
      el('td', { className: 'wrap', text: job.reason || '' }),
      el('td', { className: 'wrap' }, el('code', { text: job.payload })),
      el('td', {}, job.stack ? el('details', {}, el('summary', { text: 'stack' }), el('pre', { text: job.stack })) : '',
        el('details', {}, el('summary', { text: 'options' }), el('pre', { text: job.options }))),
      el('td', {}, ...buttons));
    return [row, extra];
  }
  async function loadJobs(queue, tenantId) {
    var box = document.getElementById('jobs');
    try {
      var list = await api('/queues/' + enc(queue) + '/tenants/' + enc(tenantId) + '/jobs?state=' + enc(jobState));
      var heads = ['Job id', 'Name', 'Attempts', 'Enqueued', 'Started', jobState === 'dead-letters' || jobState === 'failed' ? 'Failed' : 'Finished', 'Reason', 'Payload', '', ''];
      var rows = list.jobs.flatMap(function (job) { return jobRow(list, job, heads.length); });
      var label = jobState === 'gate' ? 'waiting their turn' : jobState === 'dead-letters' ? 'dead letter(s)' : jobState + ' job(s)';
      // "50 of 1,806": how many are shown of how many the tenant has, or of how many were read.
      var shown = list.total !== null
        ? (list.jobs.length < list.total ? count(list.jobs.length) + ' of ' + count(list.total) : count(list.total)) + ' ' + label
        : count(list.jobs.length) + ' ' + label + ' of ' + tenantId + ' among the latest ' + count(list.scanned) + ' of ' + count(list.stateTotal) + ' ' + jobState + ' jobs of all tenants';
      var purgeAll = jobState === 'dead-letters' && list.jobs.length
        ? el('button', { 'data-testid': 'purge-all', text: 'Purge all dead letters of ' + tenantId + ' on ' + queue, onclick: async function () {
            if (await act('purge', '/queues/' + enc(queue) + '/tenants/' + enc(tenantId) + '/dead-letters/purge')) loadJobs(queue, tenantId);
          } })
        : '';
      box.replaceChildren(el('p', { className: 'muted', 'data-testid': 'job-count', text: shown }),
        purgeAll, list.jobs.length ? table(heads, rows, { 'data-testid': 'job-list' }) : '');
    } catch (error) {
      box.replaceChildren(el('p', { className: 'late', text: 'Could not list jobs: ' + error.message }));
    }
  }
  function settingsForm(q, tenantId) {
    var s = q.settings;
    var rate = s.rateLimit || null;
    var input = function (name, value, label) {
      return el('label', {}, label + ' ', el('input', { name: name, 'data-testid': 'setting-' + name, value: value === null ? '' : String(value), size: 6, inputmode: 'numeric' }));
    };
    var form = el('form', { className: 'settings', 'data-testid': 'settings', 'data-queue': q.queue },
      input('weight', s.weight, 'Weight'), input('concurrency', s.concurrency, 'Cap (0 = none)'),
      input('rateMax', rate ? rate.max : null, 'Rate limit: jobs'), input('ratePer', rate ? rate.per : null, 'per ms (empty = none)'),
      el('button', { type: 'submit', 'data-testid': 'save-settings', text: 'Save' }));
    form.addEventListener('submit', async function (event) {
      event.preventDefault();
      var f = form.elements;
      var change = {};
      if (f.weight.value !== String(s.weight)) change.weight = f.weight.value === '' ? null : Number(f.weight.value);
      if (f.concurrency.value !== String(s.concurrency)) change.concurrency = f.concurrency.value === '' ? null : Number(f.concurrency.value);
      var max = f.rateMax.value, per = f.ratePer.value;
      if (max !== (rate ? String(rate.max) : '') || per !== (rate ? String(rate.per) : '')) {
        change.rateLimit = max === '' && per === '' ? false : { max: Number(max), per: Number(per) };
      }
      if (!Object.keys(change).length) { notice('Nothing to save for ' + tenantId + ' on ' + q.queue); return; }
      if (await act('save the settings of ' + tenantId + ' on ' + q.queue, '/queues/' + enc(q.queue) + '/tenants/' + enc(tenantId) + '/settings', change)) {
        built = null;
        refresh();
      }
    });
    return form;
  }
  function tierForm(t, tenantId) {
    var none = t.directory === null ? 'no tier' : t.directory;
    var select = el('select', { name: 'tier', 'data-testid': 'tier-select' },
      el('option', { value: '', text: 'directory record (' + none + ')' }),
      ...t.names.map(function (n) { return el('option', { value: n, text: n }); }));
    select.value = t.overridden && t.current !== null ? t.current : '';
    var form = el('form', { className: 'settings', 'data-testid': 'tier' },
      el('span', { 'data-testid': 'tier-current', text: 'Runs as ' + (t.current === null ? 'no tier' : t.current) +
        (t.overridden ? ' (assigned here; its directory record says ' + none + ')' : ' (from its directory record)') + ' ' }),
      el('label', {}, 'Tier ', select),
      el('button', { type: 'submit', 'data-testid': 'save-tier', text: 'Assign' }));
    form.addEventListener('submit', async function (event) {
      event.preventDefault();
      var tier = select.value === '' ? null : select.value;
      if (await act('assign a tier to ' + tenantId, '/tenants/' + enc(tenantId) + '/tier', { tier: tier })) {
        built = null;
        refresh();
      }
    });
    return form;
  }
  function queueRow(q, tenantId) {
    var fair = q.source === 'fair-gate';
    var verb = q.paused ? 'resume' : 'pause';
    var actions = fair && cfg.controls ? el('button', { 'data-testid': verb, text: q.paused ? 'Resume' : 'Pause', onclick: async function () {
      await act(verb + ' ' + tenantId, '/queues/' + enc(q.queue) + '/tenants/' + enc(tenantId) + '/' + verb);
      refresh();
    } }) : el('span', { className: 'muted', text: fair ? '' : 'no fair gate' });
    return el('tr', { 'data-testid': 'detail-queue', 'data-queue': q.queue },
      el('td', {}, link(q.queue, { tenant: tenantId, queue: q.queue })),
      lagCell(q, 'lag'),
      el('td', { className: 'num', text: ms(q.lag.p50) + ' / ' + ms(q.lag.p95) + ' / ' + ms(q.lag.p99) }),
      num(q.backlog, 'backlog'), num(q.inFlight, 'in-flight'), oldestCell(q, 'oldest'),
      num(q.results.completed, 'completed'), num(q.results.failed + q.results.timedOut, 'attempt-failures'),
      num(q.results.cancelled), num(q.results.deadLettered, 'final-failures'), num(q.deadLetters, 'dead-letters'),
      el('td', { 'data-testid': 'state' }, state(q)), el('td', {}, actions));
  }
  async function renderTenant(tenantId) {
    var d = await api('/tenants/' + enc(tenantId));
    var queue = params.get('queue') && d.queues.some(function (q) { return q.queue === params.get('queue'); })
      ? params.get('queue') : (d.queues[0] ? d.queues[0].queue : null);
    var w = d.windowMinutes ? ' (last ' + d.windowMinutes + ' min)' : '';
    var summary = table(['Queue', 'Lag now', 'Lag p50 / p95 / p99' + w, 'Backlog (now)', 'In flight (now)', 'Oldest waiting (now)',
      'Completed' + w, 'Attempt failures' + w, 'Cancelled' + w, 'Failed for good' + w, 'Dead letters (kept)', 'State', ''],
      d.queues.map(function (q) { return queueRow(q, tenantId); }), { 'data-testid': 'detail-queues' });
    var selected = d.queues.find(function (q) { return q.queue === queue; });
    if (built !== tenantId + '|' + queue) {
      built = tenantId + '|' + queue;
      var fair = selected && selected.source === 'fair-gate';
      var states = ['gate', 'waiting', 'active', 'delayed', 'failed', 'dead-letters'].filter(function (s) { return fair || s !== 'gate'; });
      if (states.indexOf(jobState) < 0) jobState = states[0];
      var tabs = states.map(function (s) {
        return el('button', { 'data-testid': 'jobs-tab', 'data-state': s, className: s === jobState ? 'tab on' : 'tab', text: s === 'gate' ? 'waiting their turn' : s,
          onclick: function (event) {
            jobState = s;
            document.querySelectorAll('.tab').forEach(function (b) { b.className = b === event.target ? 'tab on' : 'tab'; });
            loadJobs(queue, tenantId);
          } });
      });
      document.getElementById('view').replaceChildren(
        el('p', {}, link('\u2190 All tenants', {}, 'back')),
        el('h2', { 'data-testid': 'tenant-title', text: 'Tenant ' + tenantId }),
        d.tier ? tierForm(d.tier, tenantId) : '',
        el('div', { id: 'summary' }),
        el('p', { className: 'muted', text: d.otherQueues ? d.otherQueues + ' other queue(s) with nothing of ' + tenantId + ' in the window are not shown.' : '' }),
        queue ? el('h3', { text: 'Last hour on ' + queue }) : '', el('div', { id: 'chart' }),
        selected && selected.settings ? el('h3', { text: 'Settings on ' + queue }) : '',
        selected && selected.settings ? settingsForm(selected, tenantId) : '',
        queue ? el('h3', { text: 'Jobs on ' + queue }) : '', queue ? el('div', { className: 'tabs' }, ...tabs) : '', el('div', { id: 'jobs' }),
        el('h3', { text: 'Schedules (' + d.schedules.length + ')' }),
        table(['Key', 'From', 'Cron', 'Time zone', 'Job', 'Enabled', 'Next run (in the schedule\u2019s zone)'], d.schedules.map(function (s) {
          return el('tr', { 'data-testid': 'schedule' }, el('td', { text: s.key }), el('td', { className: 'muted', text: s.source }), el('td', { text: s.cron }),
            el('td', { text: s.timezone }), el('td', { text: s.queue + ' / ' + s.job }),
            el('td', { text: s.enabled ? 'yes' : 'no' }), el('td', { 'data-testid': 'next-run', text: when(s.nextRunAt, s.zone || undefined) }));
        })));
      if (queue) loadJobs(queue, tenantId);
    }
    document.getElementById('summary').replaceChildren(d.queues.length ? summary : el('p', { text: 'No activity of ' + tenantId + ' in the window.' }));
    if (queue) document.getElementById('chart').replaceChildren(drawChart(await api('/queues/' + enc(queue) + '/tenants/' + enc(tenantId) + '/history')));
  }
  /** Within the tenant of the view when there is one (the route a per-tenant guard admits). */
  async function renderJobSearch(jobId, tenantId) {
    var r = await api((tenantId ? '/tenants/' + enc(tenantId) : '') + '/jobs/' + enc(jobId));
    var items = r.found.map(function (f) {
      var x = f.explanation, job = f.job;
      return el('section', { className: 'card', 'data-testid': 'job-found', 'data-queue': x.queue },
        el('h3', {}, x.queue + ' \u00b7 ', x.tenantId ? link(x.tenantId, { tenant: x.tenantId, queue: x.queue }) : 'no tenant'),
        explainBox(x),
        job ? el('dl', {}, el('dt', { text: 'Name' }), el('dd', { text: job.name }), el('dt', { text: 'Attempts' }), el('dd', { text: String(job.attempts) }),
          el('dt', { text: 'Enqueued' }), el('dd', { text: when(job.enqueuedAt) }), el('dt', { text: 'Started' }), el('dd', { text: when(job.startedAt) }),
          el('dt', { text: 'Finished' }), el('dd', { text: when(job.endedAt) }),
          el('dt', { text: 'Payload' }), el('dd', {}, el('code', { text: job.payload })),
          job.reason ? el('dt', { text: 'Reason' }) : '', job.reason ? el('dd', { text: job.reason }) : '',
          job.stack ? el('dt', { text: 'Stack' }) : '', job.stack ? el('dd', {}, el('pre', { text: job.stack })) : '') : '');
    });
    document.getElementById('view').replaceChildren(
      el('p', {}, link('\u2190 All tenants', {}, 'back')),
      el('h2', { text: 'Job ' + jobId + (tenantId ? ' of tenant ' + tenantId : '') }),
      ...(items.length ? items : [el('p', { 'data-testid': 'job-not-found', text: 'No queue knows job id \u201c' + jobId + '\u201d' +
        (tenantId ? ' for tenant ' + tenantId : '') + ' (never enqueued, removed after it ended' + (tenantId ? ', or another tenant\u2019s' : '') + ').' })]));
  }
`;
