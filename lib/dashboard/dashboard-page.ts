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
 */
export function renderDashboardPage(options: ResolvedDashboardOptions & { controls: boolean }) {
  const config = {
    base: `/${options.path}`,
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
<header><h1>${title}</h1><span id="status" data-testid="status">Loading…</span></header>
<main>
<section>
<table id="tenants" data-testid="tenants">
<thead><tr>
<th>Tenant</th><th>Queue</th><th>Lag now</th><th>Lag p50 / p95 / p99</th><th>Backlog</th>
<th>In flight</th><th>Failures</th><th>Dead letters</th><th>State</th><th></th>
</tr></thead>
<tbody></tbody>
</table>
<p id="empty" hidden>No tenant activity recorded yet.</p>
</section>
<section id="detail" data-testid="detail" hidden></section>
</main>
<script type="application/json" id="config">${scriptJson(config)}</script>
<script>${DASHBOARD_SCRIPT}</script>
</body>
</html>`;
}
