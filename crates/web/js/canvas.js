// Canvas drawing that would otherwise cross from wasm to JS once per vertex.
//
// A memory chart fills a couple of thousand polygons a paint. Drawn from wasm, each moveTo, lineTo,
// beginPath and fillStyle is a call through a glue function (and each colour a string decoded from
// wasm memory): on the 50 MB bench snapshot those crossings were ~5 ms of the chart's first paint,
// the canvas's own work a fraction of it. Here the loop runs in JS over the vertices wasm wrote.

/**
 * Fills polygons in order on `ctx`: polygon p has `counts[p]` vertices, taken in turn from `xy`
 * (x, y pairs in CSS px), is closed, and is filled with `palette[colors[p]]`.
 */
export function fillPolygons(ctx, xy, counts, colors, palette) {
  let at = 0;
  let style = -1;
  for (let p = 0; p < counts.length; p++) {
    const n = counts[p];
    ctx.beginPath();
    if (n > 0) ctx.moveTo(xy[at], xy[at + 1]);
    for (let v = 1; v < n; v++) ctx.lineTo(xy[at + 2 * v], xy[at + 2 * v + 1]);
    ctx.closePath();
    if (colors[p] !== style) {
      style = colors[p];
      ctx.fillStyle = palette[style];
    }
    ctx.fill();
    at += 2 * n;
  }
}
