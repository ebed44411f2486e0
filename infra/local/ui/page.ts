/**
 * The HTML of the live view and of the report. Both run the same browser script (`client.js`)
 * with uPlot (MIT, node_modules/uplot) for the chart:
 * - live: a page served by {@link ../server.ts}, loading `uplot.js`, `uplot.css`, `client.js` and
 *   polling `state.json`;
 * - report: one self-contained file, everything inlined (uPlot's JS and CSS, the script, the
 *   final snapshot), so it opens offline from disk with no CDN.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ViewSnapshot } from './snapshot.ts';

const require = createRequire(import.meta.url);

/** The browser files, read once. */
export interface ViewAssets {
  uplotJs: string;
  uplotCss: string;
  clientJs: string;
}

let cached: ViewAssets | undefined;

/** uPlot's minified build and stylesheet and the view's script. @throws Error when uplot is not installed. */
export function viewAssets(): ViewAssets {
  cached ??= {
    uplotJs: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
    uplotCss: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
    clientJs: readFileSync(new URL('./client.js', import.meta.url), 'utf8'),
  };
  return cached;
}

const Style = `
:root { --fg:#0f172a; --muted:#64748b; --line:#e2e8f0; --bg:#f8fafc; --od:#2563eb; --spot:#ea580c; --ok:#059669; --bad:#dc2626; }
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
#app { padding: 12px 18px 40px; max-width: 1400px; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 8px 24px; border-bottom: 1px solid var(--line); padding-bottom: 8px; }
h1 { font-size: 20px; margin: 0; } h2 { font-size: 15px; margin: 18px 0 8px; }
.muted { color: var(--muted); font-weight: normal; }
.facts { display: flex; flex-wrap: wrap; gap: 6px 16px; color: var(--muted); } .facts b { color: var(--fg); }
.pass { color: #fff; background: var(--ok); padding: 1px 8px; border-radius: 4px; font-weight: 700; }
.fail { color: #fff; background: var(--bad); padding: 1px 8px; border-radius: 4px; font-weight: 700; }
.live { color: var(--ok); font-weight: 600; } .ended { color: var(--muted); }
.nodes { display: flex; flex-wrap: wrap; gap: 10px; align-items: flex-start; }
.node { width: 220px; background: #fff; border: 1px solid var(--line); border-top: 4px solid var(--od); border-radius: 6px; padding: 6px 8px; }
.node.spot { border-top-color: var(--spot); } .node.managed { border-top-color: #94a3b8; }
.node.cordoned { background: #fff7ed; } .node.notready { opacity: .6; border-style: dashed; }
.node.pending-box { border-top-color: #d97706; background: #fffbeb; }
.node-title { font-weight: 600; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.node-type { margin: 2px 0; } .node-meta { color: var(--muted); font-size: 12px; }
.cap { font-size: 11px; padding: 0 5px; border-radius: 3px; color: #fff; background: var(--od); } .cap.spot { background: var(--spot); } .cap.reserved { background: #7c3aed; }
.bar { height: 4px; background: var(--line); border-radius: 2px; margin: 5px 0; } .bar > div { height: 100%; background: var(--od); border-radius: 2px; }
.pods { display: flex; flex-wrap: wrap; gap: 3px; min-height: 14px; }
.pod { width: 12px; height: 12px; border-radius: 2px; background: var(--ok); display: inline-block; }
.pod.pending { background: #f59e0b; } .pod.terminating { background: var(--bad); } .pod.succeeded, .pod.failed { background: #cbd5e1; }
.pod.ds { width: 6px; background: #94a3b8; }
table { border-collapse: collapse; background: #fff; } th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; white-space: nowrap; }
th { background: #f1f5f9; font-weight: 600; }
td.state.Ready { color: var(--ok); font-weight: 600; } td.state.Terminating { color: var(--bad); font-weight: 600; }
.step { display: inline-block; margin-right: 4px; padding: 0 5px; border-radius: 3px; color: var(--muted); border: 1px solid var(--line); font-size: 12px; }
.step.done { color: #fff; background: #475569; border-color: #475569; }
#chart { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 6px; display: inline-block; }
#timeline ol { list-style: none; padding: 0; margin: 0; columns: 2 520px; } #timeline li { padding: 1px 0; break-inside: avoid; }
code { color: var(--muted); }
.execs { display: flex; flex-wrap: wrap; gap: 12px; }
.execution { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
.status { font-size: 11px; padding: 0 5px; border-radius: 3px; color: #fff; background: var(--od); }
.status.succeeded { background: var(--ok); } .status.failed, .status.aborted, .status.timed_out { background: var(--bad); }
svg.graph text { font-size: 11px; fill: var(--fg); }
svg.graph .state rect { fill: #fff; stroke: #cbd5e1; stroke-width: 1; }
svg.graph .state.visited rect { fill: #dbeafe; stroke: #93c5fd; }
svg.graph .state.current rect { fill: #2563eb; stroke: #1d4ed8; stroke-width: 2; } svg.graph .state.current text { fill: #fff; font-weight: 700; }
svg.graph .state.current.running rect { animation: pulse 1.2s ease-in-out infinite; }
svg.graph .state.current.succeeded rect { fill: var(--ok); stroke: #047857; }
svg.graph .state.current.failed rect, svg.graph .state.current.aborted rect { fill: var(--bad); stroke: #991b1b; }
@keyframes pulse { 50% { fill: #60a5fa; } }
svg.graph .edge { fill: none; stroke: #cbd5e1; stroke-width: 1.2; } svg.graph .edge.catch { stroke-dasharray: 4 3; }
svg.graph .edge.taken { stroke: #2563eb; stroke-width: 2.2; }
pre { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px; overflow-x: auto; font-size: 12px; }
`;

/** JSON safe to put inside a <script> element (no `</script>`, no `<!--`). */
function scriptJson(x: unknown): string {
  return JSON.stringify(x)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Text safe inside a <script> element. */
function scriptText(js: string): string {
  return js.replace(/<\/script/gi, '<\\/script');
}

/** The live page: assets and state come from the server it is served by. */
export function livePage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>nodefleet live</title>
<link rel="stylesheet" href="uplot.css"><style>${Style}</style></head>
<body><div id="app">loading…</div>
<script src="uplot.js"></script><script src="client.js"></script></body></html>
`;
}

/** The report: one file, no network, the final snapshot inlined. */
export function reportPage(snapshot: ViewSnapshot): string {
  const a = viewAssets();
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>nodefleet report: ${snapshot.scenario.replace(/[<>&"]/g, '')}</title>
<style>${a.uplotCss.replace(/<\//g, '<\\/')}</style><style>${Style}</style></head>
<body><div id="app">loading…</div>
<script>${scriptText(a.uplotJs)}</script>
<script>window.NODEFLEET_SNAPSHOT = ${scriptJson(snapshot)};</script>
<script>${scriptText(a.clientJs)}</script></body></html>
`;
}
