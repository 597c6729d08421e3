/**
 * A small dependency-free SVG scatter/line chart for bench figures (no build step, no CDN).
 */
export interface Series {
  name: string;
  color: string;
  points: [number, number][];
  /** Draw points (default) or a line through them. */
  style?: 'points' | 'line';
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  width?: number;
  height?: number;
  /** Log-scale the y axis (waits spanning ms to tens of seconds). */
  logY?: boolean;
}

const escape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function renderChart(series: Series[], options: ChartOptions): string {
  const width = options.width ?? 820;
  const height = options.height ?? 420;
  const pad = { left: 70, right: 170, top: 40, bottom: 50 };
  const all = series.flatMap((s) => s.points);
  const xMax = Math.max(1, ...all.map(([x]) => x));
  const yValues = all.map(([, y]) => Math.max(y, options.logY ? 0.1 : 0));
  const yMin = options.logY ? Math.max(0.1, Math.min(...yValues)) : 0;
  const yMax = Math.max(yMin * 10, ...yValues);
  const fy = options.logY
    ? (y: number) =>
        (Math.log10(Math.max(y, yMin)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))
    : (y: number) => y / yMax;
  const px = (x: number) => pad.left + (x / xMax) * (width - pad.left - pad.right);
  const py = (y: number) => height - pad.bottom - fy(y) * (height - pad.top - pad.bottom);

  const ticks: number[] = [];
  if (options.logY) {
    for (let t = 10 ** Math.ceil(Math.log10(yMin)); t <= yMax * 1.0001; t *= 10) ticks.push(t);
  } else {
    for (let i = 0; i <= 5; i++) ticks.push((yMax * i) / 5);
  }
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">${escape(options.title)}</text>`,
    `<line x1="${pad.left}" y1="${height - pad.bottom}" x2="${width - pad.right}" y2="${height - pad.bottom}" stroke="#333"/>`,
    `<line x1="${pad.left}" y1="${pad.top}" x2="${pad.left}" y2="${height - pad.bottom}" stroke="#333"/>`,
    `<text x="${(pad.left + width - pad.right) / 2}" y="${height - 12}" text-anchor="middle">${escape(options.xLabel)}</text>`,
    `<text transform="translate(16 ${height / 2}) rotate(-90)" text-anchor="middle">${escape(options.yLabel)}</text>`,
  ];
  for (const t of ticks) {
    const y = py(t).toFixed(1);
    parts.push(
      `<line x1="${pad.left}" y1="${y}" x2="${width - pad.right}" y2="${y}" stroke="#eee"/>`,
      `<text x="${pad.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${formatTick(t)}</text>`,
    );
  }
  for (let i = 0; i <= 5; i++) {
    const x = (xMax * i) / 5;
    parts.push(
      `<text x="${px(x).toFixed(1)}" y="${height - pad.bottom + 16}" text-anchor="middle">${formatTick(x)}</text>`,
    );
  }
  series.forEach((s, index) => {
    if (s.style === 'line') {
      const d = s.points
        .map(([x, y], i) => `${i ? 'L' : 'M'}${px(x).toFixed(1)},${py(y).toFixed(1)}`)
        .join('');
      parts.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
    } else {
      for (const [x, y] of s.points) {
        parts.push(
          `<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="2.5" fill="${s.color}" fill-opacity="0.7"/>`,
        );
      }
    }
    const ly = pad.top + 10 + index * 20;
    parts.push(
      `<rect x="${width - pad.right + 14}" y="${ly - 6}" width="12" height="12" fill="${s.color}"/>`,
      `<text x="${width - pad.right + 32}" y="${ly}" dominant-baseline="middle">${escape(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}

function formatTick(value: number): string {
  if (value >= 1000) return `${+(value / 1000).toFixed(1)}k`;
  if (value >= 1 || value === 0) return `${+value.toFixed(1)}`;
  return `${+value.toPrecision(1)}`;
}
