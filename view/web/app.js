// The page of `git zerg serve`: the graph of one feature, kept current by
// the server's event stream, and a page per task. Plain DOM, no library:
// the binary carries every byte of it.
'use strict';
(function () {
  const STATUSES = ['pending', 'claimed', 'verified', 'done', 'failed', 'blocked'];
  const $ = (id) => document.getElementById(id);

  const st = {
    feature: '',
    defaultFeature: '',
    snap: null,
    index: new Map(), // task id -> index in snap.tasks
    nodes: new Map(), // task id -> graph element
    offset: 0, // server clock minus ours, in ms
    es: null,
    taskId: '',
    taskData: null,
    attempt: 0,
    outputTimer: 0,
  };
  // For tests and curious users: what the page has drawn.
  const stats = (window.zerg = { snapshots: 0, patches: 0, paintMs: 0, nodes: 0, tip: '' });

  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
  }
  // A status goes into class names and the graph's markup: only the known
  // ones do, whatever the state says.
  function cls(status) { return STATUSES.includes(status) ? status : 'unknown'; }
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function now() { return Date.now() + st.offset; }
  function duration(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm' + String(s % 60).padStart(2, '0') + 's';
    return Math.floor(s / 3600) + 'h' + String(Math.floor(s / 60) % 60).padStart(2, '0') + 'm';
  }
  function elapsed(t) {
    if (!t.since || t.status === 'pending') return '';
    const end = t.until ? Date.parse(t.until) : now();
    return duration(end - Date.parse(t.since));
  }
  function cost(t) {
    if (!t.has_cost) return '';
    const parts = [];
    if (t.cost_usd) parts.push('$' + t.cost_usd.toFixed(2));
    if (t.tokens) parts.push(t.tokens >= 10000 ? Math.round(t.tokens / 1000) + 'k tok' : t.tokens + ' tok');
    return parts.join(' ');
  }
  function taskHref(id) { return '#/' + encodeURIComponent(st.feature) + '/task/' + encodeURIComponent(id); }
  function tooltip(t) {
    let s = t.id + ' — ' + t.title + '\n' + t.status;
    if (t.worker && t.status !== 'pending') s += ' · ' + t.worker + (t.host ? '@' + t.host : '');
    if (t.attempts) s += ' · attempt ' + t.attempts;
    if (t.reason && (t.status === 'failed' || t.status === 'blocked')) s += '\n' + t.reason;
    return s;
  }
  function subline(t) {
    let s = t.status;
    if (t.worker && t.status !== 'pending') s += ' · ' + t.worker;
    if (t.attempts > 1) s += ' #' + t.attempts;
    return s;
  }

  // Routes: #/FEATURE for the graph, #/FEATURE/task/ID for a task.
  function route() {
    const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
    const feature = parts[0] || st.feature || st.defaultFeature;
    const task = parts[1] === 'task' ? parts[2] || '' : '';
    if (feature && feature !== st.feature) connect(feature);
    if (task) showTask(task); else showOverview();
  }

  async function loadFeatures() {
    try {
      const r = await fetch('api/features');
      const j = await r.json();
      st.defaultFeature = j['default'] || (j.features && j.features[0]) || '';
      const sel = $('feature');
      sel.textContent = '';
      for (const f of j.features || []) sel.append(el('option', { value: f }, f));
      if (st.feature) sel.value = st.feature;
      $('sync').textContent = j.sync || '';
    } catch (e) { /* the stream reports the server's state */ }
  }

  function connect(feature) {
    if (st.es) st.es.close();
    st.feature = feature;
    st.snap = null;
    $('feature').value = feature;
    $('back').href = $('home').href = '#/' + encodeURIComponent(feature);
    setConn('wait', 'connecting');
    // The page came with the snapshot of its first feature: drawn now,
    // before the stream's own first one.
    const first = $('first');
    if (first) {
      first.remove();
      try {
        const sn = JSON.parse(first.textContent);
        if (sn.feature === feature) {
          onSnapshot(sn);
          stats.first = true;
        }
      } catch (e) { /* the stream's snapshot comes anyway */ }
    }
    const es = new EventSource('api/events?feature=' + encodeURIComponent(feature));
    st.es = es;
    es.addEventListener('snapshot', (e) => onSnapshot(JSON.parse(e.data)));
    es.addEventListener('patch', (e) => onPatch(JSON.parse(e.data)));
    es.addEventListener('problem', (e) => showProblem(JSON.parse(e.data).error));
    es.addEventListener('refused', (e) => onRefused(JSON.parse(e.data).error));
    es.onopen = () => setConn('live', 'live');
    es.onerror = () => setConn(es.readyState === EventSource.CLOSED ? 'lost' : 'wait', 'reconnecting');
  }

  function setConn(kind, text) {
    const c = $('conn');
    c.className = 'conn-' + kind;
    c.textContent = text;
  }
  function showProblem(text) {
    const p = $('problem');
    p.hidden = !text;
    p.textContent = text || '';
  }

  // The state failed the check status makes: nothing of it is shown, only
  // why, until a state that passes arrives.
  function onRefused(text) {
    st.snap = null;
    st.index = new Map();
    st.nodes = new Map();
    st.taskData = null;
    $('graph').textContent = '';
    $('graph-note').textContent = '';
    $('running').textContent = '';
    $('problems').textContent = '';
    $('summary').textContent = '';
    $('bar').value = 0;
    document.title = 'refused · git zerg';
    showOverview();
    showProblem(text);
    $('problem').classList.add('refused');
    stats.refused = (stats.refused || 0) + 1;
  }

  function onSnapshot(sn) {
    const t0 = performance.now();
    st.offset = Date.parse(sn.now) - Date.now();
    st.snap = sn;
    st.index = new Map(sn.tasks.map((t, i) => [t.id, i]));
    showProblem('');
    $('problem').classList.remove('refused');
    drawGraph();
    drawTimeline();
    drawHeader();
    drawSide();
    stats.snapshots++;
    stats.tip = sn.tip;
    stats.nodes = st.nodes.size;
    if (!stats.paintMs) stats.paintMs = performance.now();
    stats.lastDrawMs = performance.now() - t0;
    if (st.taskId) loadTask(false);
  }

  function onPatch(p) {
    const sn = st.snap;
    if (!sn) return;
    st.offset = Date.parse(p.now) - Date.now();
    let touchesTask = false;
    for (const t of p.tasks || []) {
      const i = st.index.get(t.id);
      if (i === undefined) continue;
      sn.tasks[i] = t;
      paintNode(t);
      if (t.id === st.taskId) touchesTask = true;
    }
    Object.assign(sn, { tip: p.tip, workers: p.workers, counts: p.counts, done: p.done, total: p.total, has_cost: p.has_cost });
    if (p.gates) sn.gates = p.gates;
    showProblem('');
    drawTimeline();
    drawHeader();
    drawSide();
    stats.patches++;
    stats.tip = p.tip;
    if (touchesTask) loadTask(false);
  }

  function paintNode(t) {
    const n = st.nodes.get(t.id);
    if (!n) return;
    n.setAttribute('class', 'node s-' + cls(t.status));
    const title = n.querySelector('title');
    if (title) title.textContent = tooltip(t);
    const sub = n.querySelector('.sub');
    if (sub) sub.textContent = subline(t);
  }

  // Layout: levels left to right with labelled boxes while the graph is
  // small enough to read that way; past that, levels top to bottom as bands
  // of small squares, which a 10,000-task feature fits in.
  function drawGraph() {
    const sn = st.snap;
    const box = $('graph');
    const widest = Math.max(0, ...sn.levels.map((l) => l.length));
    const labelled = sn.tasks.length <= 400 && widest <= 60;
    const pos = new Map();
    const parts = [];
    let w, h;
    const PAD = 16;
    let edgesNote = '';
    if (labelled) {
      const NW = 184, NH = 42, CG = 44, RG = 12, TOP = 28;
      sn.levels.forEach((ids, li) => {
        const x = PAD + li * (NW + CG);
        parts.push('<text class="level-label" x="' + x + '" y="18">level ' + (li + 1) + '</text>');
        ids.forEach((id, i) => pos.set(id, { x: x, y: TOP + i * (NH + RG), w: NW, h: NH }));
      });
      w = PAD * 2 + sn.levels.length * (NW + CG) - CG;
      h = TOP + widest * (NH + RG) + PAD;
      // Each edge gets a point of its own on both nodes' sides, spread in
      // the order of the other ends, so that the edges into (and out of) a
      // node stay apart where they meet it and each can be followed.
      const edges = [], outs = new Map(), ins = new Map();
      const add = (m, k, v) => { if (!m.has(k)) m.set(k, []); m.get(k).push(v); };
      for (const t of sn.tasks) {
        for (const d of t.deps || []) {
          if (!pos.has(d) || !pos.has(t.id)) continue;
          add(outs, d, t.id);
          add(ins, t.id, d);
        }
      }
      const byY = (a, b) => pos.get(a).y - pos.get(b).y || pos.get(a).x - pos.get(b).x;
      for (const l of outs.values()) l.sort(byY);
      for (const l of ins.values()) l.sort(byY);
      const at = (p, list, id) => p.y + p.h * (list.indexOf(id) + 1) / (list.length + 1);
      for (const [to, froms] of ins) {
        const b = pos.get(to);
        for (const from of froms) {
          const a = pos.get(from);
          const x1 = a.x + a.w, y1 = at(a, outs.get(from), to), x2 = b.x, y2 = at(b, froms, from), mx = (x1 + x2) / 2;
          edges.push('<path class="edge" data-from="' + esc(from) + '" data-to="' + esc(to) + '" d="M' + x1 + ' ' + y1.toFixed(1) +
            'C' + mx + ' ' + y1.toFixed(1) + ' ' + mx + ' ' + y2.toFixed(1) + ' ' + x2 + ' ' + y2.toFixed(1) + '"/>');
        }
      }
      parts.push(edges.join(''));
      for (const t of sn.tasks) {
        const p = pos.get(t.id);
        if (!p) continue;
        parts.push('<g class="node s-' + cls(t.status) + '" data-id="' + esc(t.id) + '" tabindex="0" role="link" transform="translate(' + p.x + ' ' + p.y + ')">' +
          '<title>' + esc(tooltip(t)) + '</title><rect width="' + p.w + '" height="' + p.h + '" rx="6"/>' +
          '<text class="id" x="10" y="17">' + esc(clip(t.id + ' ' + t.title, 24)) + '</text>' +
          '<text class="sub" x="10" y="33">' + esc(subline(t)) + '</text></g>');
      }
    } else {
      const C = 12, S = 10, LBL = 18, GAP = 10;
      const cols = Math.max(20, Math.floor(((box.clientWidth || 1000) - PAD * 2) / C));
      let y = PAD;
      sn.levels.forEach((ids, li) => {
        parts.push('<text class="level-label" x="' + PAD + '" y="' + (y + 12) + '">level ' + (li + 1) + ' · ' + ids.length + ' tasks</text>');
        y += LBL;
        ids.forEach((id, i) => pos.set(id, { x: PAD + (i % cols) * C, y: y + Math.floor(i / cols) * C, w: S, h: S }));
        y += Math.ceil(ids.length / cols) * C + GAP;
      });
      w = PAD * 2 + cols * C;
      h = y + PAD;
      let n = 0;
      for (const t of sn.tasks) n += (t.deps || []).length;
      if (n <= 5000) {
        const d = [];
        for (const t of sn.tasks) {
          const b = pos.get(t.id);
          for (const dep of t.deps || []) {
            const a = pos.get(dep);
            if (a && b) d.push('M' + (a.x + S / 2) + ' ' + (a.y + S / 2) + 'L' + (b.x + S / 2) + ' ' + (b.y + S / 2));
          }
        }
        parts.push('<path class="edges-many" d="' + d.join('') + '"/>');
      } else {
        edgesNote = ' ' + n + ' dependencies are not drawn at this size; a task\'s page lists its own.';
      }
      for (const t of sn.tasks) {
        const p = pos.get(t.id);
        if (!p) continue;
        parts.push('<rect class="node s-' + cls(t.status) + '" data-id="' + esc(t.id) + '" x="' + p.x + '" y="' + p.y + '" width="' + S + '" height="' + S + '" rx="2"><title>' + esc(tooltip(t)) + '</title></rect>');
      }
    }
    box.innerHTML = '<svg xmlns="http://www.w3.org/2000/svg" width="' + w + '" height="' + h + '" viewBox="0 0 ' + w + ' ' + h + '">' + parts.join('') + '</svg>';
    st.nodes = new Map();
    for (const n of box.querySelectorAll('.node')) st.nodes.set(n.getAttribute('data-id'), n);
    $('graph-note').textContent = sn.tasks.length + ' tasks in ' + sn.levels.length + ' levels.' + edgesNote;
  }

  // The timeline of the feature's runs: a row per worker, a bar per
  // attempt from its claim to its end (now, while it runs), coloured by
  // the state it ended in; the merges into staging as ticks below, and
  // the gate runs on staging as bars under them, passed or failed.
  function drawTimeline() {
    const sn = st.snap;
    const runs = [];
    const merges = [];
    for (const t of sn.tasks) {
      for (const r of t.runs || []) runs.push({ task: t.id, ...r });
      if (t.merged) merges.push({ task: t.id, at: Date.parse(t.merged) });
    }
    const gates = (sn.gates || []).map((g) => ({ ...g, t0: Date.parse(g.start), t1: Date.parse(g.end) }));
    const wrap = $('timeline-wrap');
    wrap.hidden = runs.length === 0;
    stats.timeline = { rows: 0, runs: 0, merges: 0, gates: 0 };
    if (!runs.length) return;
    const end = (r) => (r.end ? Date.parse(r.end) : now());
    const t0 = Math.min(...runs.map((r) => Date.parse(r.start)), ...gates.map((g) => g.t0));
    const t1 = Math.max(t0 + 1000, ...runs.map(end), ...merges.map((m) => m.at), ...gates.map((g) => g.t1));
    const workers = [...new Set(runs.map((r) => r.worker))].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    const row = new Map(workers.map((w, i) => [w, i]));
    const left = 90, width = Math.max(400, $('graph-wrap').clientWidth - 40), rowH = 20;
    const span = width - left - 10;
    const x = (ms) => left + ((ms - t0) / (t1 - t0)) * span;
    const h = (workers.length + 2) * rowH + 18;
    const parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="' + width + '" height="' + h + '">'];
    workers.forEach((w, i) => parts.push('<text x="4" y="' + (i * rowH + 14) + '">' + esc(clip(w, 14)) + '</text>'));
    for (const r of runs) {
      const x0 = x(Date.parse(r.start)), x1 = Math.max(x0 + 2, x(end(r)));
      const outcome = r.end ? cls(r.outcome) : 'running';
      const title = r.task + ' attempt ' + r.attempt + ': ' + (r.end ? r.outcome : 'running') + ', ' + duration(end(r) - Date.parse(r.start));
      parts.push('<rect class="run o-' + outcome + '" data-task="' + esc(r.task) + '" x="' + x0.toFixed(1) + '" y="' + (row.get(r.worker) * rowH + 3) +
        '" width="' + (x1 - x0).toFixed(1) + '" height="' + (rowH - 6) + '" rx="3"><title>' + esc(title) + '</title></rect>');
    }
    const my = workers.length * rowH;
    parts.push('<text x="4" y="' + (my + 14) + '">merged</text>');
    for (const m of merges) {
      const mx = x(m.at).toFixed(1);
      parts.push('<line class="merge" x1="' + mx + '" x2="' + mx + '" y1="' + (my + 3) + '" y2="' + (my + rowH - 3) + '"><title>' + esc(m.task) + ' merged</title></line>');
    }
    const gy = my + rowH;
    parts.push('<text x="4" y="' + (gy + 14) + '">gates</text>');
    for (const g of gates) {
      const x0 = x(g.t0), x1 = Math.max(x0 + 2, x(g.t1));
      const title = 'gates ' + (g.passed ? 'passed' : 'failed' + (g.failed ? ': ' + g.failed.join(', ') : '')) + ' on tree ' + g.tree.slice(0, 12) + ', ' + duration(g.t1 - g.t0);
      parts.push('<rect class="gate g-' + (g.passed ? 'passed' : 'failed') + '" data-tree="' + esc(g.tree) + '" x="' + x0.toFixed(1) + '" y="' + (gy + 3) +
        '" width="' + (x1 - x0).toFixed(1) + '" height="' + (rowH - 6) + '" rx="3"><title>' + esc(title) + '</title></rect>');
    }
    parts.push('<text x="' + left + '" y="' + (h - 2) + '">' + esc(new Date(t0).toLocaleTimeString()) + '</text>');
    parts.push('<text x="' + (width - 10) + '" y="' + (h - 2) + '" text-anchor="end">' + esc(duration(t1 - t0)) + '</text>');
    parts.push('</svg>');
    $('timeline').innerHTML = parts.join('');
    stats.timeline = { rows: workers.length, runs: runs.length, merges: merges.length, gates: gates.length };
  }

  function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + '…' : s; }

  function drawHeader() {
    const sn = st.snap;
    $('bar').max = Math.max(1, sn.total);
    $('bar').value = sn.done;
    const pct = sn.total ? Math.floor((sn.done * 100) / sn.total) : 0;
    const counts = STATUSES.filter((s) => sn.counts[s]).map((s) => s + ' ' + sn.counts[s]).join(' · ');
    $('summary').textContent = sn.done + '/' + sn.total + ' done (' + pct + '%) · ' + counts;
    document.title = sn.feature + ' ' + pct + '% · git zerg';
  }

  function drawSide() {
    const sn = st.snap;
    const running = $('running');
    const problems = $('problems');
    running.textContent = '';
    problems.textContent = '';
    let nr = 0, np = 0;
    for (const t of sn.tasks) {
      if (t.status === 'claimed') {
        if (++nr > 100) continue;
        const li = el('li');
        li.append(el('a', { href: taskHref(t.id) }, t.id), ' ');
        const who = t.worker + (t.host ? '@' + t.host : '');
        li.append(el('span', { class: 'meta', 'data-since': t.since || '' }, [who, '#' + t.attempts, elapsed(t), cost(t)].filter(Boolean).join(' · ')));
        running.append(li);
      } else if (t.status === 'failed' || t.status === 'blocked') {
        if (++np > 50) continue;
        const li = el('li');
        li.append(el('a', { href: taskHref(t.id) }, t.id), ' ', el('span', { class: 'meta' }, t.status + (t.reason ? ': ' + t.reason : '')));
        problems.append(li);
      }
    }
    if (nr > 100) running.append(el('li', { class: 'empty' }, 'and ' + (nr - 100) + ' more'));
    if (np > 50) problems.append(el('li', { class: 'empty' }, 'and ' + (np - 50) + ' more'));
    if (!nr) running.append(el('li', { class: 'empty' }, 'no task claimed'));
    if (!np) problems.append(el('li', { class: 'empty' }, 'none'));
  }

  function drawLegend() {
    const lg = $('legend');
    for (const s of STATUSES) {
      const li = el('li');
      li.append(el('span', { class: 'swatch s-' + s }), s);
      lg.append(li);
    }
  }

  function showOverview() {
    st.taskId = '';
    clearInterval(st.outputTimer);
    $('taskpage').hidden = true;
    $('overview').hidden = false;
  }

  function showTask(id) {
    if (st.taskId !== id) {
      st.taskId = id;
      st.attempt = 0;
      st.taskData = null;
      for (const k of ['t-facts', 't-spec', 't-changes', 't-output', 't-attempts']) $(k).textContent = '';
      $('t-history').tBodies[0].textContent = '';
    }
    $('overview').hidden = true;
    $('taskpage').hidden = false;
    $('t-id').textContent = id;
    loadTask(true);
    clearInterval(st.outputTimer);
    // A running task's output grows without a state change.
    st.outputTimer = setInterval(() => {
      const t = st.snap && st.snap.tasks[st.index.get(st.taskId)];
      if (t && t.status === 'claimed') loadOutput();
      drawFacts();
    }, 2000);
  }

  async function loadTask(scroll) {
    const id = st.taskId;
    if (!id) return;
    const q = 'feature=' + encodeURIComponent(st.feature) + '&id=' + encodeURIComponent(id) + (st.attempt ? '&attempt=' + st.attempt : '');
    let j;
    try {
      const r = await fetch('api/task?' + q);
      if (!r.ok) {
        showProblem(id + ': ' + (await r.text()));
        return;
      }
      j = await r.json();
    } catch (e) {
      return;
    }
    if (id !== st.taskId) return;
    st.taskData = j;
    st.offset = Date.parse(j.now) - Date.now();
    drawTask();
    if (scroll) window.scrollTo(0, 0);
  }

  async function loadOutput() {
    const d = st.taskData;
    if (!d || !d.attempts.length) return loadTask(false);
    const q = 'feature=' + encodeURIComponent(st.feature) + '&id=' + encodeURIComponent(st.taskId) + '&attempt=' + (st.attempt || 0) + '&tail=1';
    try {
      const r = await fetch('api/output?' + q);
      if (r.ok) setOutput(await r.text());
    } catch (e) { /* tried again at the next tick */ }
  }

  function setOutput(text) {
    const pre = $('t-output');
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    pre.textContent = text;
    if (atEnd) pre.scrollTop = pre.scrollHeight;
  }

  function drawFacts() {
    const d = st.taskData;
    if (!d) return;
    const t = d.view;
    const live = st.snap && st.snap.tasks[st.index.get(t.id)];
    const v = live || t;
    const facts = $('t-facts');
    facts.textContent = '';
    const add = (k, val) => {
      if (val === '' || val === undefined || val === null) return;
      facts.append(el('dt', {}, k));
      const dd = el('dd');
      if (val instanceof Node) dd.append(val); else dd.textContent = val;
      facts.append(dd);
    };
    add('level', v.level);
    add('worker', v.worker && v.status !== 'pending' ? v.worker + (v.host ? ' on ' + v.host : '') : '');
    add('attempts', v.attempts);
    add(v.status === 'claimed' ? 'running for' : 'last attempt ran', elapsed(v));
    add('cost', cost(v));
    add('reason', v.reason || '');
    add('commit', d.task.commit || '');
    const links = (ids) => {
      if (!ids || !ids.length) return '';
      const span = el('span');
      ids.forEach((x, i) => {
        if (i) span.append(', ');
        span.append(el('a', { href: taskHref(x) }, x));
      });
      return span;
    };
    add('depends on', links(v.deps));
    add('needed by', links(d.task.dependents));
  }

  function drawTask() {
    const d = st.taskData;
    const t = d.task;
    const badge = $('t-status');
    badge.className = 'badge s-' + cls(t.status);
    badge.textContent = t.status;
    $('t-title').textContent = (t.spec && t.spec.title) || '';
    drawFacts();
    $('t-spec').textContent = JSON.stringify(t.spec, null, 2);
    const body = $('t-history').tBodies[0];
    body.textContent = '';
    for (const ev of t.history || []) {
      const tr = el('tr');
      for (const v of [new Date(ev.at).toLocaleString(), ev.op, ev.from || '', ev.to, ev.worker || '', ev.reason || '']) tr.append(el('td', {}, v));
      body.append(tr);
    }
    const ch = $('t-changes');
    ch.textContent = '';
    for (const c of d.changes) {
      const div = el('div', { class: 'change' });
      const head = el('div', { class: 'head' });
      head.append(el('code', {}, c.commit.slice(0, 12)), ' ' + new Date(c.at).toLocaleString() + ' ', el('strong', {}, c.subject));
      const pre = el('pre', { class: 'diff' });
      for (const line of c.diff.replace(/\n$/, '').split('\n')) {
        const cls = line.startsWith('+ ') ? 'add' : line.startsWith('- ') ? 'del' : '';
        pre.append(cls ? el('span', { class: cls }, line) : line + '\n');
      }
      div.append(head, pre);
      ch.append(div);
    }
    if (!d.changes.length) ch.append(el('p', {}, 'none'));
    if (d.partial) ch.append(el('p', {}, 'Older changes are left out here: git zerg log -p shows them all.'));
    const at = $('t-attempts');
    at.textContent = '';
    if (!d.attempts.length) {
      at.textContent = t.attempts
        ? 'No attempt log of this task on this machine: a rush keeps its workers\' logs on its own host, and a task claimed by hand has none.'
        : 'No output yet: the task has not run.';
      $('t-output').hidden = true;
      return;
    }
    $('t-output').hidden = false;
    const shown = d.output ? d.output.attempt : 0;
    for (const a of d.attempts) {
      const b = el('button', { type: 'button', 'aria-pressed': String(a === shown) }, 'attempt ' + a);
      b.addEventListener('click', () => { st.attempt = a; loadTask(false); });
      at.append(b);
    }
    const full = el('a', { href: 'api/output?feature=' + encodeURIComponent(st.feature) + '&id=' + encodeURIComponent(t.spec.id) + '&attempt=' + shown }, 'whole log');
    at.append(' ', full);
    if (d.output) setOutput((d.output.truncated ? '… (earlier output left out)\n' : '') + d.output.text);
  }

  function start() {
    drawLegend();
    $('feature').addEventListener('change', (e) => { location.hash = '#/' + encodeURIComponent(e.target.value); });
    $('graph').addEventListener('click', (e) => {
      const n = e.target.closest('.node');
      if (n) location.hash = taskHref(n.getAttribute('data-id'));
    });
    $('graph').addEventListener('keydown', (e) => {
      const n = e.target.closest && e.target.closest('.node');
      if (n && e.key === 'Enter') location.hash = taskHref(n.getAttribute('data-id'));
    });
    window.addEventListener('hashchange', route);
    // Elapsed times tick between changes.
    setInterval(() => { if (st.snap && !st.taskId) drawSide(); }, 1000);
    // New features, and the background sync's outcome.
    setInterval(loadFeatures, 10000);
    loadFeatures().then(route);
  }
  start();
})();
