/**
 * @internal The tenant view's chart of the last hour (inline SVG, built with createElementNS):
 * lag p50/p95/p99 per minute on a log scale, and below it the jobs completed and failed for good
 * per minute. Each minute has a tooltip with its figures.
 */
export const DASHBOARD_CHART_SCRIPT = String.raw`
  var SERIES = [['p50', '#1f5fbf'], ['p95', '#d98200'], ['p99', '#a12626']];
  function drawChart(history) {
    var W = 760, L = 64, R = 12, T = 14, LAG_H = 160, GAP = 34, BAR_H = 70, B = 22;
    var H = T + LAG_H + GAP + BAR_H + B;
    var points = history.points;
    var n = points.length;
    var step = (W - L - R) / n;
    var x = function (i) { return L + step * (i + 0.5); };
    var maxLag = 10;
    var maxDone = 1;
    points.forEach(function (p) {
      if (p.p99 !== null && p.p99 > maxLag) maxLag = p.p99;
      if (p.completed + p.deadLettered > maxDone) maxDone = p.completed + p.deadLettered;
    });
    var TICKS = [1, 10, 100, 1000, 10000, 60000, 600000, 3600000];
    var top = TICKS.find(function (t) { return t >= maxLag; }) || maxLag;
    var y = function (v) {
      var f = Math.log10(Math.max(1, v)) / Math.log10(top);
      return T + LAG_H - f * LAG_H;
    };
    var root = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'data-testid': 'lag-chart',
      'aria-label': 'Lag and throughput of ' + history.tenantId + ' on ' + history.queue + ', last ' + history.minutes + ' minutes' });
    root.append(svg('text', { x: L, y: 10, 'font-size': 11, fill: '#5b6472' }, 'Lag of jobs started each minute (log scale)'));
    TICKS.filter(function (t) { return t <= top; }).forEach(function (tick) {
      root.append(svg('line', { x1: L, x2: W - R, y1: y(tick), y2: y(tick), stroke: '#e3e6ea' }));
      root.append(svg('text', { x: L - 6, y: y(tick) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#5b6472' }, ms(tick)));
    });
    SERIES.forEach(function (series) {
      var d = '';
      var count = 0;
      var open = false;
      points.forEach(function (p, i) {
        var v = p[series[0]];
        if (v === null) { open = false; return; }
        d += (open ? 'L' : 'M') + x(i).toFixed(1) + ' ' + y(v).toFixed(1) + ' ';
        open = true;
        count++;
      });
      var path = svg('path', { d: d || 'M0 0', fill: 'none', stroke: series[1], 'stroke-width': 2, 'data-series': series[0], 'data-points': count });
      root.append(path);
      points.forEach(function (p, i) {
        if (p[series[0]] !== null) root.append(svg('circle', { cx: x(i), cy: y(p[series[0]]), r: 2, fill: series[1] }));
      });
    });
    var base = T + LAG_H + GAP + BAR_H;
    root.append(svg('text', { x: L, y: T + LAG_H + GAP - 6, 'font-size': 11, fill: '#5b6472' },
      'Jobs per minute: completed (green), failed for good (red); peak ' + maxDone));
    root.append(svg('line', { x1: L, x2: W - R, y1: base, y2: base, stroke: '#c4cad3' }));
    points.forEach(function (p, i) {
      var h1 = BAR_H * p.completed / maxDone;
      var h2 = BAR_H * p.deadLettered / maxDone;
      if (h1 > 0) root.append(svg('rect', { x: x(i) - step * 0.4, y: base - h1, width: step * 0.8, height: h1, fill: '#3c9d5d', 'data-testid': 'throughput-bar' }));
      if (h2 > 0) root.append(svg('rect', { x: x(i) - step * 0.4, y: base - h1 - h2, width: step * 0.8, height: h2, fill: '#a12626' }));
      var hover = svg('rect', { x: x(i) - step / 2, y: T, width: step, height: base - T, fill: 'transparent' });
      hover.append(svg('title', {}, clock(p.at) + ' \u00b7 lag p50 ' + ms(p.p50) + ', p95 ' + ms(p.p95) + ', p99 ' + ms(p.p99) +
        ' \u00b7 started ' + p.started + ', completed ' + p.completed + ', attempt failures ' + (p.failed + p.timedOut) + ', failed for good ' + p.deadLettered));
      root.append(hover);
    });
    [0, 15, 30, 45, n - 1].forEach(function (i) {
      var label = i === n - 1 ? 'now' : '\u2212' + (n - i) + ' min';
      root.append(svg('text', { x: x(i), y: H - 6, 'text-anchor': 'middle', 'font-size': 11, fill: '#5b6472' }, label));
    });
    var legend = el('p', { className: 'legend' }, ...SERIES.map(function (s) {
      return el('span', { className: 'key', 'data-color': s[1] }, el('span', { className: 'swatch ' + s[0] }), s[0] + ' ');
    }), el('span', { className: 'muted', text: ' \u00b7 percentiles are estimated from histogram buckets (2 significant digits)' }));
    return el('div', { className: 'chart' }, root, legend);
  }
`;
