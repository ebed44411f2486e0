// nodefleet live view / report, the browser side. Renders a ViewSnapshot (infra/local/ui/snapshot.ts):
// from window.NODEFLEET_SNAPSHOT in the report, or polled from ./state.json in the live view.
// Charts are uPlot (global `uPlot`, loaded before this script); the state graphs are SVG.
/* global uPlot, document, window, fetch, setTimeout */
(function () {
  'use strict';
  const SVG = 'http://www.w3.org/2000/svg';
  const PollMs = 1000;
  const view = { snapshot: undefined, chart: undefined, errors: 0 };
  window.nodefleetView = view;

  /** Element builder: h('div', {class: 'x', 'data-y': 1}, child, 'text', …). */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== false) el.setAttribute(k, v === true ? '' : String(v));
    for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : String(c));
    return el;
  }
  function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined) el.setAttribute(k, String(v));
    for (const c of children.flat()) if (c) el.append(c instanceof Node ? c : String(c));
    return el;
  }
  function clock(t) {
    const x = Math.max(0, Math.round(t));
    return `t+${String(Math.floor(x / 60)).padStart(2, '0')}:${String(x % 60).padStart(2, '0')}`;
  }
  function usd(x, digits) {
    return x === undefined || x === null ? '–' : `$${Number(x).toFixed(digits === undefined ? 4 : digits)}`;
  }
  function cpu(m) {
    return m % 1000 === 0 ? String(m / 1000) : `${m}m`;
  }
  function mem(b) {
    const gi = b / 2 ** 30;
    return gi >= 1 ? `${gi.toFixed(gi >= 10 ? 0 : 1)}Gi` : `${Math.round(b / 2 ** 20)}Mi`;
  }
  function shortNode(name) {
    return name.replace(/\.[a-z0-9-]+\.compute\.internal$/, '').replace(/\.ec2\.internal$/, '');
  }

  function renderHeader(snap) {
    const res = snap.result;
    return h(
      'header',
      {},
      h('h1', {}, 'nodefleet ', h('span', { class: 'muted' }, snap.mode === 'report' ? 'report' : 'live view')),
      h(
        'div',
        { class: 'facts' },
        h('span', {}, 'scenario ', h('b', { id: 'scenario' }, snap.scenario)),
        h('span', {}, 'region ', h('b', {}, snap.region)),
        h('span', {}, 'virtual ', h('b', { id: 'clock' }, clock(snap.t)), ` (×${snap.speed})`),
        h('span', {}, 'now ', h('b', { id: 'cost-now' }, `${usd(snap.cost.nowUsdPerHour)}/h`)),
        h('span', {}, 'peak ', h('b', {}, `${usd(snap.cost.peakUsdPerHour)}/h`)),
        h('span', {}, 'run cost ', h('b', {}, usd(snap.cost.totalUsd, 5))),
        res ? h('span', { id: 'result', class: res.ok ? 'pass' : 'fail' }, res.ok ? 'PASS' : 'FAIL') : h('span', { id: 'live', class: 'live' }, '● live'),
      ),
    );
  }

  function podEl(p) {
    const cls = ['pod', p.terminating ? 'terminating' : p.phase.toLowerCase(), p.daemonSet ? 'ds' : ''].join(' ');
    return h('span', {
      class: cls,
      'data-pod': `${p.namespace}/${p.name}`,
      title: `${p.namespace}/${p.name} ${p.phase}${p.terminating ? ' (terminating)' : ''} cpu ${cpu(p.cpuMilli)} mem ${mem(p.memoryBytes)}`,
    });
  }

  function nodeEl(n) {
    const pct = n.allocatableCpuMilli ? Math.min(100, Math.round((100 * n.requestedCpuMilli) / n.allocatableCpuMilli)) : 0;
    const state = !n.ready ? 'notready' : n.cordoned ? 'cordoned' : 'ready';
    return h(
      'div',
      {
        class: `node ${n.managed ? 'managed' : 'nodefleet'} ${n.capacityType} ${state}`,
        'data-node': n.name,
        'data-nodepool': n.nodePool,
        'data-instance-type': n.instanceType,
      },
      h('div', { class: 'node-title', title: n.name }, shortNode(n.name)),
      h('div', { class: 'node-type' }, h('b', {}, n.instanceType), ' ', h('span', { class: `cap ${n.capacityType}` }, n.capacityType)),
      h('div', { class: 'node-meta' }, n.zone, ' · ', n.managed ? 'managed node group' : h('span', {}, 'NodePool ', h('b', {}, n.nodePool || '?'))),
      h('div', { class: 'node-meta' }, `${usd(n.priceUsdPerHour)}/h`, ' · ', state === 'ready' ? 'Ready' : state === 'cordoned' ? 'cordoned' : 'NotReady'),
      h('div', { class: 'bar', title: `cpu requested ${cpu(n.requestedCpuMilli)} of ${cpu(n.allocatableCpuMilli)}` }, h('div', { style: `width:${pct}%` })),
      h('div', { class: 'pods' }, n.pods.map(podEl)),
    );
  }

  function renderCluster(snap) {
    return h(
      'section',
      { id: 'cluster' },
      h('h2', {}, `Nodes (${snap.nodes.length})`),
      h(
        'div',
        { class: 'nodes' },
        h(
          'div',
          { class: 'node pending-box', id: 'pending' },
          h('div', { class: 'node-title' }, `Pending pods (${snap.pendingPods.length})`),
          h('div', { class: 'node-meta' }, 'not bound to a node'),
          h('div', { class: 'pods' }, snap.pendingPods.map(podEl)),
        ),
        snap.nodes.map(nodeEl),
      ),
    );
  }

  function renderClaims(snap) {
    const steps = ['Launched', 'Registered', 'Initialized', 'InstanceTerminating'];
    return h(
      'section',
      { id: 'claims' },
      h('h2', {}, `NodeClaims (${snap.claims.length})`),
      snap.claims.length === 0
        ? h('p', { class: 'muted' }, 'none yet')
        : h(
            'table',
            {},
            h(
              'tr',
              {},
              ['name', 'NodePool', 'instance type', 'capacity', 'zone', 'price', 'state', 'lifecycle'].map((x) => h('th', {}, x)),
            ),
            snap.claims.map((c) =>
              h(
                'tr',
                { 'data-claim': c.name, 'data-state': c.state },
                h('td', {}, h('b', {}, c.name)),
                h('td', {}, c.nodePool),
                h('td', {}, c.instanceType || '–'),
                h('td', {}, c.capacityType || '–'),
                h('td', {}, c.zone || '–'),
                h('td', {}, c.priceUsdPerHour === undefined ? '–' : `${usd(c.priceUsdPerHour)}/h`),
                h('td', { class: `state ${c.state}` }, c.state),
                h(
                  'td',
                  { class: 'lifecycle' },
                  h('span', { class: 'step done' }, `Created ${clock(c.createdT)}`),
                  steps.map((st) => {
                    const hit = c.lifecycle.find((x) => x.type === st);
                    return h(
                      'span',
                      { class: `step ${hit ? 'done' : ''}` },
                      `${st === 'InstanceTerminating' ? 'Terminating' : st}${hit ? ` ${clock(hit.t)}` : ''}`,
                    );
                  }),
                ),
              ),
            ),
          ),
    );
  }

  function renderInstances(snap) {
    return h(
      'section',
      { id: 'instances' },
      h('h2', {}, `EC2 instances (${snap.instances.length})`),
      h(
        'table',
        {},
        h(
          'tr',
          {},
          ['instance', 'launched by', 'instance type', 'capacity', 'zone', 'price', 'state', 'ran', 'cost'].map((x) => h('th', {}, x)),
        ),
        snap.instances.map((i) =>
          h(
            'tr',
            { 'data-instance': i.instanceId, 'data-instance-type': i.instanceType, 'data-managed': i.managed ? 'true' : 'false' },
            h('td', {}, i.instanceId),
            h('td', {}, i.managed ? 'managed node group' : `NodePool ${i.nodePool || '?'}`),
            h('td', {}, h('b', {}, i.instanceType)),
            h('td', {}, h('span', { class: `cap ${i.capacityType}` }, i.capacityType)),
            h('td', {}, i.zone),
            h('td', {}, `${usd(i.priceUsdPerHour)}/h`),
            h('td', {}, i.state),
            h('td', {}, `${clock(i.launchT)} → ${i.endT === undefined ? 'now' : clock(i.endT)}`),
            h('td', {}, usd(i.costUsd, 5)),
          ),
        ),
      ),
    );
  }

  function chartData(snap) {
    const x = snap.series.map((p) => p.t);
    return [x, snap.series.map((p) => p.nodes), snap.series.map((p) => p.pendingPods), snap.series.map((p) => p.costUsdPerHour)];
  }

  function renderChart(snap, holder) {
    const data = chartData(snap);
    if (view.chart && view.chart.root.isConnected) {
      view.chart.setData(data);
      return;
    }
    const width = Math.max(480, Math.min(1200, (document.getElementById('app').clientWidth || 1000) - 40));
    view.chart = new uPlot(
      {
        width,
        height: 260,
        scales: {
          x: { time: false },
          count: { range: (_u, _min, max) => [0, Math.max(4, max + 1)] },
          usd: { range: (_u, _min, max) => [0, Math.max(0.1, max * 1.25)] },
        },
        axes: [
          { space: 70, incrs: [1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200], values: (_u, ticks) => ticks.map(clock) },
          { scale: 'count', label: 'nodes / pods' },
          { scale: 'usd', side: 1, label: 'USD per hour', grid: { show: false }, values: (_u, ticks) => ticks.map((t) => `$${t.toFixed(2)}`) },
        ],
        series: [
          { label: 'time', value: (_u, v) => (v === null ? '–' : clock(v)) },
          { label: 'nodes', scale: 'count', stroke: '#2563eb', width: 2, paths: uPlot.paths.stepped({ align: 1 }) },
          { label: 'pending pods', scale: 'count', stroke: '#d97706', width: 2, dash: [6, 4], paths: uPlot.paths.stepped({ align: 1 }) },
          {
            label: 'cost USD/h',
            scale: 'usd',
            stroke: '#059669',
            fill: 'rgba(5,150,105,0.10)',
            width: 2,
            paths: uPlot.paths.stepped({ align: 1 }),
            value: (_u, v) => (v === null ? '–' : `$${v.toFixed(4)}`),
          },
        ],
      },
      data,
      holder,
    );
  }

  function renderTimeline(snap) {
    return h(
      'section',
      { id: 'timeline' },
      h('h2', {}, 'Timeline'),
      h(
        'ol',
        {},
        snap.timeline.map((e) => h('li', {}, h('code', {}, clock(e.t)), ' ', e.text)),
      ),
    );
  }

  /** The state machine as SVG: layered top to bottom, the taken transitions and visited states marked, the current state lit. */
  function graphSvg(graph, exec) {
    const W = 148;
    const H = 26;
    const GX = 26;
    const GY = 22;
    const LEFT = 36; // room for back edges drawn round the left margin
    const width = LEFT + graph.width * (W + GX) + 10;
    const height = graph.height * (H + GY) + 6;
    const pos = {};
    const byName = {};
    for (const st of graph.states) {
      byName[st.name] = st;
      pos[st.name] = { x: LEFT + st.column * (W + GX), y: 3 + st.layer * (H + GY) };
    }
    const prog = exec.progress;
    const visited = new Set(prog.entered);
    const marker = (id, fill) =>
      s(
        'marker',
        { id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' },
        s('path', { d: 'M0,0 L10,5 L0,10 z', fill }),
      );
    const idBase = `g-${exec.name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    const svg = s(
      'svg',
      { class: 'graph', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `state graph of execution ${exec.name}` },
      s('defs', {}, marker(`${idBase}-a`, '#94a3b8'), marker(`${idBase}-h`, '#2563eb')),
    );
    for (const e of graph.edges) {
      const a = pos[e.from];
      const b = pos[e.to];
      const taken = prog.transitions[`${e.from}→${e.to}`] || 0;
      let d;
      if (!e.back && byName[e.to].layer > byName[e.from].layer) {
        const x1 = a.x + W / 2;
        const y1 = a.y + H;
        const x2 = b.x + W / 2;
        const y2 = b.y;
        d = `M${x1},${y1} C${x1},${y1 + GY} ${x2},${y2 - GY} ${x2},${y2}`;
      } else if (a.x + W <= b.x) {
        // A loop state left of the state it returns to: up, then right into its left side.
        const x1 = a.x + W / 2;
        const y2 = b.y + H / 2;
        d = `M${x1},${a.y} Q${x1},${y2} ${b.x},${y2}`;
      } else {
        // Any other loop back (or a same-layer move): out of the left side, round the left margin, into the left side.
        const x1 = a.x;
        const y1 = a.y + H / 2;
        const x2 = b.x;
        const y2 = b.y + H / 2;
        const bulge = Math.min(x1, x2) - 30;
        d = `M${x1},${y1} C${bulge},${y1} ${bulge},${y2} ${x2},${y2}`;
      }
      svg.append(
        s(
          'path',
          {
            d,
            class: `edge ${e.kind}${e.back ? ' back' : ''}${taken ? ' taken' : ''}`,
            'data-edge': `${e.from}→${e.to}`,
            'marker-end': `url(#${idBase}-${taken ? 'h' : 'a'})`,
          },
          s('title', {}, `${e.from} → ${e.to} (${e.kind})${taken ? `, taken ${taken}×` : ''}`),
        ),
      );
    }
    for (const st of graph.states) {
      const p = pos[st.name];
      const isCurrent = prog.current === st.name;
      const cls = ['state', st.type.toLowerCase(), visited.has(st.name) ? 'visited' : '', isCurrent ? `current ${exec.status.toLowerCase()}` : ''].join(' ');
      const times = prog.entered.filter((x) => x === st.name).length;
      svg.append(
        s(
          'g',
          { class: cls, 'data-state': st.name, transform: `translate(${p.x},${p.y})` },
          s('title', {}, `${st.name} (${st.type})${times ? `, entered ${times}×` : ''}`),
          s('rect', { width: W, height: H, rx: st.type === 'Choice' ? 13 : 4 }),
          s('text', { x: W / 2, y: H / 2 + 4, 'text-anchor': 'middle' }, times > 1 ? `${st.name} ×${times}` : st.name),
        ),
      );
    }
    return svg;
  }

  function renderExecutions(snap) {
    return h(
      'section',
      { id: 'executions' },
      h('h2', {}, `Termination executions (${snap.executions.length})`),
      snap.executions.length === 0
        ? h('p', { class: 'muted' }, 'none yet: an execution starts when a node is disrupted or interrupted')
        : h(
            'div',
            { class: 'execs' },
            snap.executions.map((e) =>
              h(
                'div',
                { class: `execution ${e.status.toLowerCase()}`, 'data-execution': e.name, 'data-status': e.status, 'data-current': e.progress.current || '' },
                h(
                  'div',
                  { class: 'exec-title' },
                  h('b', {}, e.name),
                  ' ',
                  h('span', { class: `status ${e.status.toLowerCase()}` }, e.status),
                  ` reason ${e.reason || '?'}`,
                ),
                h(
                  'div',
                  { class: 'node-meta' },
                  `node ${e.nodeName ? shortNode(e.nodeName) : '?'} · ${e.instanceId || '?'} · ${clock(e.startT)} → ${e.stopT === undefined ? 'running' : clock(e.stopT)} · ${e.events} events · now in `,
                  h('b', {}, e.progress.current || '–'),
                ),
                graphSvg(snap.graph, e),
              ),
            ),
          ),
    );
  }

  function render(snap) {
    view.snapshot = snap;
    const root = document.getElementById('app');
    let chartHolder = document.getElementById('chart');
    if (!chartHolder) {
      chartHolder = h('div', { id: 'chart' });
      root.replaceChildren(
        h('div', { id: 'head' }),
        h('div', { id: 'main' }),
        h('section', { id: 'chart-section' }, h('h2', {}, 'Nodes, pending pods and cost over time'), chartHolder),
        h('div', { id: 'rest' }),
      );
    }
    document.getElementById('head').replaceChildren(renderHeader(snap));
    document.getElementById('main').replaceChildren(renderCluster(snap), renderClaims(snap));
    renderChart(snap, chartHolder);
    const rest = [renderExecutions(snap), renderInstances(snap), renderTimeline(snap)];
    if (snap.result) rest.push(h('section', { id: 'summary' }, h('h2', {}, 'Summary'), h('pre', {}, snap.result.summary)));
    document.getElementById('rest').replaceChildren(...rest);
    document.title = `nodefleet ${snap.mode === 'report' ? 'report' : 'live'}: ${snap.scenario} ${clock(snap.t)}`;
  }

  function poll() {
    fetch('state.json', { cache: 'no-store' })
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`HTTP ${r.status}`))))
      .then((snap) => {
        view.errors = 0;
        render(snap);
        setTimeout(poll, PollMs);
      })
      .catch(() => {
        // The demo has ended (server gone): keep the last picture and say so.
        view.errors += 1;
        const live = document.getElementById('live');
        if (live) {
          live.textContent = '○ demo ended';
          live.className = 'ended';
        }
        if (view.errors < 5) setTimeout(poll, PollMs * 2);
      });
  }

  if (window.NODEFLEET_SNAPSHOT) render(window.NODEFLEET_SNAPSHOT);
  else poll();
})();
