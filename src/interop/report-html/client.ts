/**
 * The page's own style and script, inlined (report.html loads nothing: it is read from a
 * CI artefact or a mail). The script filters the matrix and the results, and renders a
 * result's ladder from its `<template>` the first time it is opened, so a full suite's
 * page parses hundreds of ladders only as they are looked at.
 */

export const STYLE = `
:root { --ok:#2e7d32; --known:#b26a00; --bad:#c62828; --finding:#6a1b9a; --muted:#666;
  --line:#d0d4da; --bg:#f6f7f9; font-family: system-ui, sans-serif; font-size: 14px; }
body { margin: 0 auto; padding: 12px 20px 40px; max-width: 1220px; color: #1d1f23; }
h1 { font-size: 20px; margin: 4px 0 6px; } h2 { font-size: 16px; margin: 22px 0 8px; }
.env { color: var(--muted); margin: 2px 0; }
.totals span { margin-right: 14px; }
.filters { position: sticky; top: 0; background: #fff; z-index: 2; padding: 8px 0;
  border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: 6px 16px;
  align-items: center; }
.filters label { white-space: nowrap; }
.filters select, .filters input[type=search] { font: inherit; padding: 2px 4px; }
.matrix-wrap { overflow-x: auto; max-height: 60vh; border: 1px solid var(--line); }
table { border-collapse: collapse; }
.matrix th, .matrix td { border: 1px solid var(--line); padding: 2px 6px; white-space: nowrap; }
.matrix thead th { position: sticky; top: 0; background: var(--bg); font-weight: 600; }
.matrix td.name { font-family: ui-monospace, monospace; font-size: 12px; }
.matrix td.cell { text-align: center; }
.matrix td.cell.off a { opacity: .15; }
.v { display: inline-block; min-width: 64px; padding: 1px 6px; border-radius: 3px;
  font-size: 12px; font-weight: 600; color: #fff; text-decoration: none; text-align: center; }
.v-match { background: var(--ok); } .v-known { background: var(--known); }
.v-finding { background: var(--finding); } .v-fail, .v-not-run { background: var(--bad); } .v-not-applicable { background: transparent; color: inherit; border: 1px dashed currentColor; }
details.result { border: 1px solid var(--line); border-radius: 4px; margin: 4px 0; }
details.result > summary { cursor: pointer; padding: 4px 8px; background: var(--bg);
  list-style-position: inside; }
details.result > summary code { font-size: 12px; }
details.result .body { padding: 8px; overflow-x: auto; }
.meta { color: var(--muted); font-size: 12px; }
table.fields { margin: 8px 0; font-size: 12px; }
table.fields th, table.fields td { border: 1px solid var(--line); padding: 2px 6px;
  text-align: left; vertical-align: top; }
table.fields td { font-family: ui-monospace, monospace; white-space: pre-wrap;
  word-break: break-all; max-width: 420px; }
table.fields td:first-child { word-break: normal; white-space: nowrap; }
table.fields td.d-consequence { white-space: normal; word-break: normal; }
p.why { margin: 4px 0; max-width: 1000px; font-size: 13px; }
table.fields td.reason { font-family: system-ui, sans-serif; white-space: normal;
  word-break: normal; max-width: 520px; }
td.d-known, span.d-known { background: #fff3e0; color: var(--known); font-weight: 600; }
td.d-unrecorded, span.d-unrecorded { background: #ffebee; color: var(--bad); font-weight: 600; }
td.d-consequence { background: #f3f3f3; color: var(--muted); }
svg.ladder { display: block; font-family: ui-monospace, monospace; }
svg.ladder text { font-size: 11px; fill: #1d1f23; }
svg.ladder .panel { font: 600 13px system-ui, sans-serif; fill: #1d1f23; }
svg.ladder .lane { font: 600 12px system-ui, sans-serif; fill: var(--muted); }
svg.ladder .lifeline { stroke: #9aa3ad; stroke-width: 2; }
svg.ladder .rule { stroke: var(--line); }
svg.ladder .section { font: italic 11px system-ui, sans-serif; fill: var(--muted); }
svg.ladder .pk line { stroke: #1d1f23; stroke-width: 1.6; }
svg.ladder .pk polygon { fill: #1d1f23; }
svg.ladder .op { font-weight: 700; font-size: 12px; }
svg.ladder .seq { font-weight: 400; fill: #37474f; }
svg.ladder .tk { fill: #37474f; }
svg.ladder .time { fill: #1565c0; font-size: 10.5px; }
svg.ladder .absent { font-style: italic; fill: var(--muted); }
svg.ladder .ghost line { stroke: #b0b7bf; stroke-width: 1.4; stroke-dasharray: 5 4; }
svg.ladder .ghost.d-known line { stroke: var(--known); }
svg.ladder .ghost.d-unrecorded line { stroke: var(--bad); }
svg.ladder .wc rect { fill: #eef3f8; stroke: #90a4ae; }
svg.ladder .pk.d-known line, svg.ladder .wc.d-known rect { stroke: var(--known); stroke-width: 2.4; }
svg.ladder .pk.d-known polygon { fill: var(--known); }
svg.ladder .pk.d-unrecorded line, svg.ladder .wc.d-unrecorded rect { stroke: var(--bad); stroke-width: 2.4; }
svg.ladder .pk.d-unrecorded polygon { fill: var(--bad); }
svg.ladder .wc.d-known rect { fill: #fff3e0; } svg.ladder .wc.d-unrecorded rect { fill: #ffebee; }
svg.ladder tspan.d-known, svg.ladder text.d-known { fill: var(--known); font-weight: 700; }
svg.ladder tspan.d-unrecorded, svg.ladder text.d-unrecorded { fill: var(--bad); font-weight: 700; }
svg.ladder tspan.d-consequence, svg.ladder text.d-consequence { fill: var(--muted); }
.tables { display: flex; flex-wrap: wrap; gap: 0 16px; align-items: flex-start; }
details.changed { margin-top: 14px; } details.changed > summary { cursor: pointer; } details.changed > summary h2 { display: inline; }
.hidden { display: none !important; }
`;

export const SCRIPT = `
(function () {
  'use strict';
  var filters = document.querySelectorAll('[data-filter]');
  var results = document.querySelectorAll('details.result');
  function wanted() {
    var w = {};
    filters.forEach(function (f) {
      var key = f.getAttribute('data-filter');
      if (f.type === 'checkbox') {
        if (!w[key]) w[key] = [];
        if (f.checked) w[key].push(f.value);
      } else w[key] = f.value;
    });
    return w;
  }
  function keep(el, w) {
    var d = el.dataset;
    return w.verdict.indexOf(d.verdict) >= 0 &&
      (w.family === '' || w.family === d.family) &&
      (w.device === '' || w.device === d.device) &&
      (w.kernel === '' || w.kernel === d.kernel) &&
      (w.text === '' || d.id.indexOf(w.text) >= 0);
  }
  function apply() {
    var w = wanted();
    var shown = 0;
    results.forEach(function (el) {
      var on = keep(el, w);
      el.classList.toggle('hidden', !on);
      if (on) shown += 1;
    });
    document.querySelectorAll('.matrix td.cell').forEach(function (td) {
      var a = td.querySelector('a');
      td.classList.toggle('off', !a || !keep(a, w));
    });
    document.querySelectorAll('.matrix tbody tr').forEach(function (tr) {
      tr.classList.toggle('hidden', !tr.querySelector('td.cell:not(.off)'));
    });
    document.querySelectorAll('.matrix [data-column]').forEach(function (th) {
      var d = th.dataset;
      th.classList.toggle('hidden', (w.device !== '' && w.device !== d.device) ||
        (w.kernel !== '' && w.kernel !== d.kernel));
    });
    document.getElementById('shown').textContent = String(shown);
  }
  function render(el) {
    var slot = el.querySelector('.body');
    var tpl = el.querySelector('template');
    if (slot && tpl && !slot.hasChildNodes()) slot.appendChild(tpl.content.cloneNode(true));
  }
  results.forEach(function (el) {
    el.addEventListener('toggle', function () { if (el.open) render(el); });
  });
  document.querySelectorAll('.matrix a').forEach(function (a) {
    a.addEventListener('click', function () {
      var el = document.getElementById(a.getAttribute('href').slice(1));
      if (el) { el.classList.remove('hidden'); el.open = true; render(el); }
    });
  });
  filters.forEach(function (f) { f.addEventListener('input', apply); f.addEventListener('change', apply); });
  var target = location.hash && document.getElementById(location.hash.slice(1));
  if (target && target.tagName === 'DETAILS') { target.open = true; render(target); }
  apply();
})();
`;
