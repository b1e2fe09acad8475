/**
 * The eval's plot: four panels (tasks solved, recovery after a failure, wasted calls per task,
 * tokens per solved task), one bar per arm with its 95 % interval as a whisker. Drawn once as a list
 * of rectangles and texts, written as SVG and rasterised to PNG by `raster-png.ts`.
 */
import { createRaster, type Rgb } from './raster-png.ts';
import type { EvalResults } from './run-eval.ts';
import type { Interval } from './statistics.ts';

type Shape =
  | { kind: 'rect'; x: number; y: number; width: number; height: number; colour: Rgb }
  | { kind: 'text'; x: number; y: number; text: string; scale: number; colour: Rgb; anchor: 'start' | 'middle' | 'end' };

const WIDTH = 1200;
const HEIGHT = 600;
const ARM_COLOURS: readonly Rgb[] = [
  [148, 148, 148],
  [52, 120, 198],
  [36, 160, 90],
];
const INK: Rgb = [30, 30, 30];
const GRID: Rgb = [225, 225, 225];

function formatValue(value: number, asPercent: boolean): string {
  if (Number.isNaN(value)) return 'N/A';
  if (asPercent) return `${Math.round(value * 100)}%`;
  return value >= 1000 ? `${(value / 1000).toFixed(1)}K` : value.toFixed(value >= 10 ? 0 : 2);
}

/** The shapes of the plot. */
function layout(results: EvalResults): Shape[] {
  const shapes: Shape[] = [];
  const text = (x: number, y: number, value: string, style: { scale: number; anchor?: 'start' | 'middle' | 'end' }) =>
    shapes.push({ kind: 'text', x, y, text: value, scale: style.scale, colour: INK, anchor: style.anchor ?? 'start' });
  text(WIDTH / 2, 16, `toolrun eval · model ${results.model} · ${results.tasks.length} tasks · seed ${results.seed}`, { scale: 2, anchor: 'middle' });
  const panels: Array<{ title: string; percent: boolean; pick: (arm: EvalResults['arms'][number]) => Interval }> = [
    { title: 'tasks solved', percent: true, pick: (arm) => arm.taskSuccess },
    { title: 'recovery after a failure', percent: true, pick: (arm) => arm.recoveryRate },
    { title: 'wasted calls / task', percent: false, pick: (arm) => arm.wastedCallsPerTask },
    { title: 'tokens / solved task', percent: false, pick: (arm) => arm.tokensPerSuccess },
  ];
  const panelWidth = (WIDTH - 40) / panels.length;
  const top = 110;
  const bottom = HEIGHT - 150;
  panels.forEach((panel, index) => {
    const left = 20 + index * panelWidth + 40;
    const width = panelWidth - 60;
    const intervals = results.arms.map(panel.pick);
    const finiteHighs = intervals.map((interval) => interval.high).filter((value) => Number.isFinite(value));
    const max = panel.percent ? 1 : Math.max(1e-9, ...finiteHighs) * 1.15;
    const y = (value: number) => bottom - (value / max) * (bottom - top);
    text(left + width / 2, 50, panel.title, { scale: 2, anchor: 'middle' });
    for (const fraction of [0, 0.5, 1]) {
      shapes.push({ kind: 'rect', x: left, y: y(fraction * max), width, height: 1, colour: GRID });
      text(left - 4, y(fraction * max) - 4, formatValue(fraction * max, panel.percent), { scale: 1, anchor: 'end' });
    }
    const slot = width / Math.max(1, intervals.length);
    intervals.forEach((interval, armIndex) => {
      const x = left + armIndex * slot + slot * 0.15;
      const barWidth = slot * 0.7;
      const colour = ARM_COLOURS[armIndex % ARM_COLOURS.length] as Rgb;
      if (Number.isFinite(interval.estimate)) {
        shapes.push({ kind: 'rect', x, y: y(interval.estimate), width: barWidth, height: bottom - y(interval.estimate), colour });
        const centre = x + barWidth / 2;
        shapes.push({ kind: 'rect', x: centre - 1, y: y(interval.high), width: 2, height: Math.max(1, y(interval.low) - y(interval.high)), colour: INK });
        shapes.push({ kind: 'rect', x: centre - 8, y: y(interval.high) - 1, width: 16, height: 2, colour: INK });
        shapes.push({ kind: 'rect', x: centre - 8, y: y(interval.low) - 1, width: 16, height: 2, colour: INK });
      }
      text(x + barWidth / 2, Math.min(bottom - 10, y(Number.isFinite(interval.high) ? interval.high : 0)) - 16, formatValue(interval.estimate, panel.percent), {
        scale: 1,
        anchor: 'middle',
      });
    });
    shapes.push({ kind: 'rect', x: left, y: bottom, width, height: 2, colour: INK });
  });
  results.arms.forEach((arm, armIndex) => {
    const rowY = HEIGHT - 120 + armIndex * 28;
    shapes.push({ kind: 'rect', x: 60, y: rowY, width: 18, height: 14, colour: ARM_COLOURS[armIndex % ARM_COLOURS.length] as Rgb });
    text(90, rowY, `${arm.label}: ${arm.successes}/${arm.tasks} solved, ${arm.duplicatedWrites} duplicated writes`, { scale: 2 });
  });
  text(WIDTH - 20, HEIGHT - 20, 'whiskers: 95% interval (Wilson for rates, bootstrap for means)', { scale: 1, anchor: 'end' });
  return shapes;
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const rgb = (colour: Rgb) => `rgb(${colour[0]},${colour[1]},${colour[2]})`;

/** The plot as an SVG document (texts in a sans-serif font; the same geometry as the PNG). */
export function renderEvalSvg(results: EvalResults): string {
  const parts = layout(results).map((shape) =>
    shape.kind === 'rect'
      ? `<rect x="${shape.x.toFixed(1)}" y="${shape.y.toFixed(1)}" width="${shape.width.toFixed(1)}" height="${shape.height.toFixed(1)}" fill="${rgb(shape.colour)}"/>`
      : `<text x="${shape.x.toFixed(1)}" y="${(shape.y + 7 * shape.scale).toFixed(1)}" font-size="${9 * shape.scale}" text-anchor="${shape.anchor}" fill="${rgb(shape.colour)}">${escapeXml(shape.text)}</text>`,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>${parts.join('')}</svg>\n`;
}

/** The plot as PNG bytes (1200 × 600, texts in a 5×7 bitmap font, upper case). */
export function renderEvalPng(results: EvalResults): Buffer {
  const raster = createRaster(WIDTH, HEIGHT);
  for (const shape of layout(results)) {
    if (shape.kind === 'rect') raster.fillRect(shape, shape.colour);
    else raster.drawText(shape.text, shape.x, shape.y, { scale: shape.scale, colour: shape.colour, anchor: shape.anchor });
  }
  return raster.toPng();
}
