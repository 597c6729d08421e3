import { DASHBOARD_ACTION_HEADER, ResolvedDashboardOptions } from './dashboard-options.interface';
import { DASHBOARD_SCRIPT } from './dashboard-script';
import { DASHBOARD_STYLE } from './dashboard-style';

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** JSON safe inside a `<script>` element (no `</script>`, no `<!--`). */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028|\u2029/g, '');
}

/**
 * The dashboard: one self-contained page. Data is fetched from `<path>/api` and rendered with
 * `textContent` only, so nothing a tenant controls (ids, job names, error messages) becomes HTML.
 * The view lives in the URL: the list (`?q=` filters it, `?queue=` narrows it to one queue), a
 * tenant (`?tenant=`, with `&queue=` for its chart and jobs), or a job found by id (`?job=`).
 */
export function renderDashboardPage(options: ResolvedDashboardOptions & { controls: boolean }) {
  const config = {
    refreshMs: options.refreshMs,
    controls: options.controls,
    actionHeader: DASHBOARD_ACTION_HEADER,
  };
  const title = escapeHtml(options.title);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${DASHBOARD_STYLE}</style>
</head>
<body>
<header>
<h1><a href="?">${title}</a></h1>
<form method="get" role="search">
<input id="search" name="q" type="search" placeholder="Filter tenants or queues" data-testid="search" autocomplete="off">
</form>
<form method="get">
<input name="job" type="search" placeholder="Find a job by id" data-testid="job-search" autocomplete="off">
<input name="tenant" type="hidden" id="job-search-tenant">
</form>
<span id="status" data-testid="status">Loading…</span>
</header>
<p id="notice" data-testid="notice" role="status" aria-live="polite"></p>
<main id="view" data-testid="view"></main>
<script type="application/json" id="config">${scriptJson(config)}</script>
<script>${DASHBOARD_SCRIPT}</script>
</body>
</html>`;
}
