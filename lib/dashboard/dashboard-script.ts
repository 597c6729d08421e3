import { DASHBOARD_CHART_SCRIPT } from './dashboard-chart.script';
import { DASHBOARD_LIST_SCRIPT } from './dashboard-list.script';
import { DASHBOARD_TENANT_SCRIPT } from './dashboard-tenant.script';

/**
 * @internal Shared helpers of the page's script: DOM building with `textContent` only (never
 * `innerHTML`), the JSON API (a refusal shows the server's own message), links that carry the
 * view in the URL (`?tenant=`, `?queue=`, `?q=`, `?job=`), and the refresh loop.
 */
const CORE = String.raw`
  var cfg = JSON.parse(document.getElementById('config').textContent);
  // The page's own path is the API's base: it holds a global prefix, a RouterModule path or a
  // proxy's mount point, which the configured path does not.
  var base = location.pathname.replace(/\/+$/, '');
  var params = new URLSearchParams(location.search);
  var timer = null;
  var SVG = 'http://www.w3.org/2000/svg';
  function el(tag, props) {
    var node = document.createElement(tag);
    var children = Array.prototype.slice.call(arguments, 2);
    Object.keys(props || {}).forEach(function (key) {
      var value = props[key];
      if (value === undefined || value === null) return;
      if (key === 'text') node.textContent = value;
      else if (key === 'className') node.className = value;
      else if (key.indexOf('on') === 0) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    });
    children.forEach(function (child) {
      if (child === null || child === undefined || child === '') return;
      node.append(child instanceof Node ? child : String(child));
    });
    return node;
  }
  function svg(tag, attrs, text) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  /** Two significant digits at most: the percentiles come from histogram buckets. */
  function ms(value) {
    if (value === null || value === undefined) return '\u2013';
    if (value < 10) return Math.round(value) + ' ms';
    if (value < 1000) return Number(value.toPrecision(2)) + ' ms';
    if (value < 60000) return Number((value / 1000).toPrecision(2)) + ' s';
    return Number((value / 60000).toPrecision(2)) + ' min';
  }
  /**
   * Every time on the page in one format, labelled with its zone: the browser's
   * ("2026-12-02 06:40:12 UTC"), or a named one for schedules ("... Australia/Lord_Howe (GMT+11)").
   */
  var LOCAL_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;
  var formats = new Map();
  function timeParts(value, zone) {
    if (!formats.has(zone)) {
      formats.set(zone, new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit',
        hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short' }));
    }
    var parts = {};
    formats.get(zone).formatToParts(new Date(value)).forEach(function (p) { parts[p.type] = p.value; });
    parts.zone = zone === LOCAL_ZONE || zone === parts.timeZoneName ? parts.timeZoneName : zone + ' (' + parts.timeZoneName + ')';
    return parts;
  }
  function instant(value) { return typeof value === 'string' ? Date.parse(value) : value; }
  function when(value, zone) {
    var t = instant(value);
    if (t === null || t === undefined || t !== t) return '\u2013';
    var p = timeParts(t, zone || LOCAL_ZONE);
    return p.year + '-' + p.month + '-' + p.day + ' ' + p.hour + ':' + p.minute + ':' + p.second + ' ' + p.zone;
  }
  /** The time of day alone, same format and label (for today's events: refreshes, chart minutes). */
  function clock(value) {
    var p = timeParts(instant(value), LOCAL_ZONE);
    return p.hour + ':' + p.minute + ':' + p.second + ' ' + p.zone;
  }
  /** ISO instants in a server's text, shown in the page's format. */
  function localTimes(text) {
    return String(text).replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, function (iso) { return when(iso); });
  }
  /** A count with thousands separators: "1,806". */
  function count(value) { return Number(value).toLocaleString('en-US'); }
  function status(text) { document.getElementById('status').textContent = text; }
  /** What the last action got from the server: stays until the next action (refreshes keep it). */
  function notice(text) { document.getElementById('notice').textContent = text; }
  /** A link to a view of this page: ?tenant=&queue=&q=&job= (empty values left out). */
  function href(view) {
    var search = new URLSearchParams();
    Object.keys(view).forEach(function (key) { if (view[key]) search.set(key, view[key]); });
    var text = search.toString();
    return location.pathname + (text ? '?' + text : '');
  }
  function link(text, view, testid) {
    return el('a', { href: href(view), text: text, 'data-testid': testid });
  }
  async function api(path, init) {
    var response = await fetch(base + '/api' + path, Object.assign({ credentials: 'same-origin' }, init || {}));
    var body = null;
    try { body = await response.json(); } catch (error) { body = null; }
    if (!response.ok) {
      var message = body && body.message ? [].concat(body.message).join('; ') : response.statusText;
      throw new Error(message + ' (HTTP ' + response.status + ')');
    }
    return body;
  }
  /** Runs a dashboard action (POST with the action header) and shows what the server said. */
  async function act(what, path, body) {
    var headers = {};
    headers[cfg.actionHeader] = '1';
    var init = { method: 'POST', headers: headers };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    try {
      var result = await api(path, init);
      notice(result && result.message ? result.message : what + ': done');
      return result;
    } catch (error) {
      notice('Could not ' + what + ': ' + error.message);
      return null;
    }
  }
  function enc(value) { return encodeURIComponent(value); }
  function table(headings, rows, props) {
    return alignHeads(el('table', props || {},
      el('thead', {}, el('tr', {}, ...headings.map(function (h) { return el('th', { text: h }); }))),
      el('tbody', {}, ...rows)));
  }
  /** A heading sits over its figures: right-aligned where its column's cells are numbers. */
  function alignHeads(node) {
    var first = node.querySelector('tbody tr');
    if (!first) return node;
    var heads = node.querySelectorAll('thead th');
    Array.prototype.forEach.call(first.children, function (cell, i) {
      if (heads[i] && cell.classList.contains('num')) heads[i].classList.add('num');
    });
    return node;
  }
  function num(value, testid) {
    return el('td', { className: 'num', text: typeof value === 'number' ? count(value) : value, 'data-testid': testid });
  }
  /** The state badge, with since / until when the gate knows it. */
  function state(s) {
    if (s.paused) return el('span', {}, el('span', { className: 'badge paused', text: 'paused' }),
      s.pausedAt ? el('span', { className: 'muted since', 'data-testid': 'paused-since', text: 'since ' + when(s.pausedAt) + ' (' + ms(Date.now() - s.pausedAt) + ' ago)' }) : '');
    if (s.slowLane) return el('span', { className: 'badge slow', text: 'slow lane' });
    if (s.rateLimited) return el('span', {}, el('span', { className: 'badge slow', text: 'rate limited' }),
      s.oldestWaitingMs ? el('span', { className: 'muted since', 'data-testid': 'limited-since', text: 'held since ' + when(Date.now() - s.oldestWaitingMs) }) : '',
      s.rateLimitedUntil ? el('span', { className: 'muted since', text: 'next start ' + clock(s.rateLimitedUntil) }) : '');
    return el('span', { className: 'badge', text: 'active' });
  }
  /**
   * Lag now: live only while something waits. An idle queue shows its last lag muted (never as
   * an alarm); a live one is red from 10 s.
   */
  function lagCell(s, testid) {
    if (!s.backlog) return el('td', { className: 'num muted', 'data-testid': testid, 'data-live': 'no', text: 'idle',
      title: 'Nothing waiting: no live lag (last p95 ' + ms(s.lag.p95) + ')' });
    // Held by its own pause or rate limit: late by its settings, not by the workers.
    var held = s.paused || s.rateLimited;
    return el('td', { className: 'num' + (s.currentLagMs >= 10000 && !held ? ' late' : ''), 'data-testid': testid, 'data-live': 'yes', text: ms(s.currentLagMs),
      title: held ? 'Held by its own ' + (s.paused ? 'pause' : 'rate limit') + ', not by the workers' : null });
  }
  function oldestCell(s, testid) {
    return el('td', { className: 'num', 'data-testid': testid, text: s.oldestWaitingMs ? ms(s.oldestWaitingMs) : '\u2013',
      title: s.oldestWaitingMs ? 'waiting since ' + when(Date.now() - s.oldestWaitingMs) : 'nothing waiting' });
  }
`;

const MAIN = String.raw`
  // In a tenant's view the job search stays within that tenant (the route its operator may use).
  (function () {
    var scope = document.getElementById('job-search-tenant');
    scope.value = params.get('tenant') || '';
    scope.disabled = !scope.value;
    if (scope.value) document.querySelector('[data-testid="job-search"]').placeholder = 'Find a job of ' + scope.value + ' by id';
  })();
  async function load() {
    try {
      if (params.get('job')) await renderJobSearch(params.get('job'), params.get('tenant'));
      else if (params.get('tenant')) await renderTenant(params.get('tenant'));
      else await renderList();
      status('Updated ' + clock(Date.now()) + ' \u00b7 refreshes every ' + cfg.refreshMs / 1000 + ' s');
    } catch (error) {
      status('Could not load: ' + error.message);
    }
  }
  function refresh() {
    clearTimeout(timer);
    return load().finally(function () {
      clearTimeout(timer);
      timer = setTimeout(refresh, cfg.refreshMs);
    });
  }
  refresh();
`;

/** @internal Inline script of the dashboard page (one IIFE; the views share its helpers). */
export const DASHBOARD_SCRIPT = `
(function () {
  'use strict';
${CORE}
${DASHBOARD_LIST_SCRIPT}
${DASHBOARD_CHART_SCRIPT}
${DASHBOARD_TENANT_SCRIPT}
${MAIN}
})();
`;
