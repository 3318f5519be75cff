"""The report page's style and script, inlined into every report (no server, no network).

The script links lines across the three panes of a compile: every line of the source pane has a
`data-key` (`file:line`); every line of the IR and code panes a `data-chain` (the `file:line` of
its node, then of each call it was inlined from). Clicking (or hovering) a source line marks the
IR and code lines whose chain holds it; clicking an IR or code line marks the source lines of its
chain and the lines of the other panes with the same chain. The stage selector shows the IR after
one pass; lines a pass added are marked.
"""

STYLE = """
:root { --hl: #ffe27a; --hov: #fff3bf; --added: #e3f7e3; --ink: #222; --muted: #666; }
* { box-sizing: border-box; }
body { font: 14px/1.4 system-ui, sans-serif; color: var(--ink); margin: 0 1.5em 3em; }
h1 { font-size: 1.5em; margin: .8em 0 .2em; }
h2 { font-size: 1.15em; margin: 1.6em 0 .3em; border-top: 1px solid #ccc; padding-top: .8em; }
h3 { font-size: 1em; margin: .8em 0 .3em; }
table { border-collapse: collapse; margin: .4em 0; }
th, td { border: 1px solid #ddd; padding: 2px 8px; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre, .lines { font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.muted { color: var(--muted); }
.refusal { background: #fdecea; border-left: 4px solid #d33; padding: .3em .6em; margin: .3em 0; }
.refusal pre { margin: .3em 0 0; white-space: pre-wrap; }
.panes { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 10px; }
.pane { border: 1px solid #ccc; border-radius: 4px; min-width: 0; }
.pane > .title { background: #f2f2f2; padding: 3px 8px; font-weight: 600; display: flex;
                 gap: .6em; align-items: center; }
.pane > .title select { font: inherit; font-weight: normal; }
.lines { overflow: auto; max-height: 34em; padding: 2px 0; position: relative; }
.ln { white-space: pre; padding: 0 6px; cursor: pointer; min-height: 1.45em; }
.ln .no { display: inline-block; width: 3.2em; color: #999; text-align: right;
          margin-right: .8em; user-select: none; }
.ln.added { background: var(--added); }
.ln.hov { background: var(--hov); }
.ln.hl { background: var(--hl); }
.srcfile { color: var(--muted); padding: 2px 6px; border-top: 1px dashed #ccc; }
.stage { display: none; }
.stage.shown { display: block; }
.bar { display: flex; height: 14px; width: 420px; border: 1px solid #bbb; }
.bar span { display: block; height: 100%; }
.bar .frontend { background: #8ab6e8; } .bar .passes { background: #9ad29a; }
.bar .codegen { background: #f0b96b; }
svg.regions text { font: 11px ui-monospace, monospace; fill: #222; pointer-events: none; }
svg.regions g.region { cursor: pointer; }
svg.regions g.region.hl > rect { stroke: #c90; stroke-width: 3; }
.grid2 { display: flex; gap: 2em; flex-wrap: wrap; align-items: flex-start; }
nav a { margin-right: 1em; }
"""

SCRIPT = r"""
(function () {
  function spec(el) { return el.closest('section.spec'); }
  function chain(el) { return (el.dataset.chain || '').split(' ').filter(Boolean); }
  function clear(root, cls) {
    root.querySelectorAll('.' + cls).forEach(function (e) { e.classList.remove(cls); });
  }
  function mark(root, line, cls) {
    clear(root, cls);
    var keys = new Set(), same = null;
    if (line.dataset.key) { keys.add(line.dataset.key); }
    else { chain(line).forEach(function (k) { keys.add(k); }); same = line.dataset.chain; }
    root.querySelectorAll('[data-key]').forEach(function (e) {
      if (keys.has(e.dataset.key)) { e.classList.add(cls); }
    });
    root.querySelectorAll('[data-chain]').forEach(function (e) {
      var hit = same === null ? chain(e).some(function (k) { return keys.has(k); })
                              : e.dataset.chain === same;
      if (hit) { e.classList.add(cls); }
    });
    return root.querySelectorAll('.' + cls).length;
  }
  document.addEventListener('click', function (ev) {
    var line = ev.target.closest('.ln, g.region');
    if (!line || !spec(line)) { return; }
    var root = spec(line);
    var n = mark(root, line, 'hl');
    root.dataset.marked = String(n);
    reveal(root, line);
  });
  // Scroll each other pane to its first marked line, so what a click found is in view.
  function reveal(root, clicked) {
    root.querySelectorAll('.pane .lines').forEach(function (lines) {
      if (lines.contains(clicked)) { return; }
      var first = Array.from(lines.querySelectorAll('.ln.hl')).find(function (e) {
        return e.offsetParent !== null;
      });
      if (first) { lines.scrollTop = first.offsetTop - lines.offsetTop - 40; }
    });
  }
  document.addEventListener('mouseover', function (ev) {
    var line = ev.target.closest('.ln');
    if (line && spec(line)) { mark(spec(line), line, 'hov'); }
  });
  document.addEventListener('change', function (ev) {
    var select = ev.target.closest('select.stages');
    if (!select) { return; }
    var pane = select.closest('.pane');
    pane.querySelectorAll('.stage').forEach(function (s) {
      s.classList.toggle('shown', s.dataset.stage === select.value);
    });
  });
  document.body.dataset.ready = 'yes';
})();
"""
