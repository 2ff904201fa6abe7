/**
 * Inline SVG charts of the certificate's load figures: latency percentiles per load run, and
 * successes admitted per rate-limit window against the limit. Pure; no script, no external asset.
 */
import type { LoadChart } from './types.ts';

export function esc(s: unknown): string {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const COLORS = { p50: '#6baed6', p90: '#3182bd', p99: '#08519c', max: '#999' } as const;

/** Grouped bars: one group per run, bars p50/p90/p99/max (ms). */
export function latencyChart(chart: LoadChart): string {
  const runs = chart.latency;
  if (!runs.length) return '';
  const keys = ['p50', 'p90', 'p99', 'max'] as const;
  const top = Math.max(1, ...runs.flatMap((r) => keys.map((k) => r[k])));
  const W = 300,
    H = 180,
    left = 48,
    bottom = 36,
    bar = 16,
    gap = 26;
  const groupW = keys.length * bar;
  const width = Math.max(W, left + runs.length * (groupW + gap) + 20);
  const y = (v: number) => H - bottom - ((H - bottom - 14) * v) / top;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${H}" role="img" aria-label="latency of ${esc(chart.check)}">`,
  );
  parts.push(`<title>Latency of ${esc(chart.check)} (ms)</title>`);
  for (const f of [0, 0.5, 1]) {
    const v = Math.round(top * f);
    parts.push(
      `<line x1="${left}" x2="${width - 10}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="${left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="10">${v} ms</text>`,
    );
  }
  runs.forEach((r, i) => {
    const x0 = left + 10 + i * (groupW + gap);
    keys.forEach((k, j) => {
      const x = x0 + j * bar;
      parts.push(
        `<rect x="${x}" y="${y(r[k])}" width="${bar - 2}" height="${Math.max(0, H - bottom - y(r[k]))}" fill="${COLORS[k]}"><title>${esc(r.label)} ${k}: ${r[k]} ms</title></rect>`,
      );
      parts.push(`<text x="${x + (bar - 2) / 2}" y="${y(r[k]) - 2}" text-anchor="middle" font-size="8">${Math.round(r[k])}</text>`);
    });
    parts.push(`<text x="${x0 + groupW / 2}" y="${H - bottom + 14}" text-anchor="middle" font-size="10">${esc(r.label)}</text>`);
  });
  keys.forEach((k, j) => {
    parts.push(
      `<rect x="${left + j * 62}" y="${H - 14}" width="10" height="10" fill="${COLORS[k]}"/><text x="${left + j * 62 + 14}" y="${H - 5}" font-size="10">${k}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('');
}

/** Bars of successes per window with the limit as a dashed line; a bar over the limit is red. */
export function windowsChart(chart: LoadChart): string {
  const ws = chart.windows;
  if (!ws.length) return '';
  const top = Math.max(1, ...ws.map((w) => Math.max(w.successes, w.limit))) * 1.15;
  const H = 160,
    left = 40,
    bottom = 28,
    bar = 34,
    gap = 18;
  const width = Math.max(300, left + ws.length * (bar + gap) + 20);
  const y = (v: number) => H - bottom - ((H - bottom - 10) * v) / top;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${H}" role="img" aria-label="successes per window of ${esc(chart.check)}">`,
  );
  parts.push(`<title>Successes per rate-limit window of ${esc(chart.check)}</title>`);
  ws.forEach((w, i) => {
    const x = left + 10 + i * (bar + gap);
    const over = w.successes > w.limit;
    parts.push(
      `<rect x="${x}" y="${y(w.successes)}" width="${bar}" height="${Math.max(0, H - bottom - y(w.successes))}" fill="${over ? '#c0392b' : '#2e8b57'}"><title>${esc(w.label)}: ${w.successes} admitted, limit ${w.limit}</title></rect>`,
    );
    parts.push(`<text x="${x + bar / 2}" y="${y(w.successes) - 3}" text-anchor="middle" font-size="10">${w.successes}</text>`);
    parts.push(`<line x1="${x - 4}" x2="${x + bar + 4}" y1="${y(w.limit)}" y2="${y(w.limit)}" stroke="#333" stroke-dasharray="4 2"/>`);
    parts.push(`<text x="${x + bar / 2}" y="${H - bottom + 14}" text-anchor="middle" font-size="10">${esc(w.label)}</text>`);
  });
  parts.push(`<text x="${left}" y="${H - 4}" font-size="10">dashed: the limit; bars: successes admitted</text>`);
  parts.push('</svg>');
  return parts.join('');
}
