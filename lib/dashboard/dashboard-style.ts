/** @internal Inline CSS of the dashboard page. */
export const DASHBOARD_STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2430; background: #f5f6f8; }
header { display: flex; align-items: baseline; gap: 16px; padding: 12px 20px; background: #1d2430; color: #fff; }
h1 { font-size: 18px; margin: 0; }
h2 { font-size: 16px; margin: 16px 0 8px; }
h3 { font-size: 14px; margin: 14px 0 6px; }
#status { font-size: 12px; opacity: .8; }
main { padding: 16px 20px; }
table { border-collapse: collapse; width: 100%; background: #fff; margin-bottom: 8px; }
th, td { padding: 6px 10px; border-bottom: 1px solid #e3e6ea; text-align: left; white-space: nowrap; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .03em; color: #5b6472; background: #fafbfc; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.wrap { white-space: normal; max-width: 480px; word-break: break-word; }
button { font: inherit; cursor: pointer; border: 1px solid #c4cad3; background: #fff; border-radius: 4px; padding: 2px 10px; }
button.link { border: 0; background: none; color: #1f5fbf; padding: 0; text-decoration: underline; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; background: #e3f4e8; color: #1c6b34; }
.badge.paused { background: #fde8e8; color: #a12626; }
.badge.slow { background: #fff3d6; color: #8a5a00; }
.late { color: #a12626; font-weight: 600; }
#detail { background: #fff; padding: 4px 16px 12px; border: 1px solid #e3e6ea; }
`;
