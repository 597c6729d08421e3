/** @internal Inline CSS of the dashboard page. */
export const DASHBOARD_STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2430; background: #f5f6f8; }
header { display: flex; align-items: center; gap: 16px; padding: 10px 20px; background: #1d2430; color: #fff; flex-wrap: wrap; }
header a { color: #fff; text-decoration: none; }
header input { font: inherit; padding: 3px 8px; border-radius: 4px; border: 0; width: 220px; }
h1 { font-size: 18px; margin: 0; }
h2 { font-size: 16px; margin: 18px 0 8px; }
h3 { font-size: 14px; margin: 16px 0 6px; }
#status { font-size: 12px; opacity: .85; margin-left: auto; }
#notice { margin: 6px 16px 0; min-height: 1.2em; font-size: 13px; }
main { padding: 8px 20px 24px; }
table { border-collapse: collapse; width: 100%; background: #fff; margin-bottom: 8px; }
th, td { padding: 5px 10px; border-bottom: 1px solid #e3e6ea; text-align: left; white-space: nowrap; vertical-align: top; }
th { font-size: 11px; text-transform: uppercase; letter-spacing: .03em; color: #5b6472; background: #fafbfc; white-space: normal; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.since { display: block; white-space: normal; min-width: 200px; margin-top: 2px; }
td.wrap { min-width: 180px; }
td.time { white-space: normal; min-width: 90px; }
td.id { font: 12px ui-monospace, monospace; white-space: normal; word-break: break-all; min-width: 120px; }
details summary { cursor: pointer; margin: 4px 0; }
td.wrap, .wrap { white-space: normal; max-width: 420px; word-break: break-word; }
tr.group td { background: #f0f3f7; font-weight: 600; border-top: 2px solid #d5dae1; }
tr.sub td { font-size: 13px; }
a { color: #1f5fbf; }
code, pre { font: 12px/1.35 ui-monospace, monospace; white-space: pre-wrap; word-break: break-word; margin: 0; }
button { font: inherit; cursor: pointer; border: 1px solid #c4cad3; background: #fff; border-radius: 4px; padding: 2px 10px; margin-right: 4px; }
button.tab.on { background: #1d2430; color: #fff; border-color: #1d2430; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 400; background: #e3f4e8; color: #1c6b34; }
.badge.paused { background: #fde8e8; color: #a12626; }
.badge.slow { background: #fff3d6; color: #8a5a00; }
.late { color: #a12626; font-weight: 600; }
.muted { color: #6b7482; font-weight: 400; font-size: 12px; }
.tabs { margin-bottom: 8px; }
.chart { background: #fff; border: 1px solid #e3e6ea; padding: 8px; display: inline-block; }
.legend { margin: 4px 0 0; font-size: 12px; }
.swatch { display: inline-block; width: 14px; height: 3px; vertical-align: middle; margin: 0 4px 0 10px; }
.swatch.p50 { background: #1f5fbf; } .swatch.p95 { background: #d98200; } .swatch.p99 { background: #a12626; }
.settings { background: #fff; border: 1px solid #e3e6ea; padding: 8px 12px; display: flex; gap: 14px; align-items: center; flex-wrap: wrap; margin-bottom: 12px; }
.settings input { font: inherit; padding: 2px 6px; }
.explain { background: #f7f9fc; border-left: 3px solid #1f5fbf; padding: 6px 12px; }
.explain .summary { font-weight: 600; margin: 0 0 6px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; }
dt { color: #5b6472; } dd { margin: 0; }
.card { background: #fff; border: 1px solid #e3e6ea; padding: 4px 16px 12px; margin-bottom: 12px; }
`;
