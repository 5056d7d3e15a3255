// ibench report: draws each step's per-second charts with uPlot from the timelines embedded
// as JSON (#ibench-timelines). A step's charts share one time axis: the cursor is synced
// across them (hover values in each chart's legend), and a zoom (drag across a chart;
// double-click to reset) applies to all of them.
(function () {
  "use strict";
  var el = document.getElementById("ibench-timelines");
  if (!el || typeof uPlot === "undefined") return;
  var steps = JSON.parse(el.textContent);

  function trim(v, d) {
    var s = v.toFixed(d);
    return s.indexOf(".") < 0 ? s : s.replace(/0+$/, "").replace(/\.$/, "");
  }
  function num(v) {
    var a = Math.abs(v);
    if (a >= 1e9) return trim(v / 1e9, 2) + "G";
    if (a >= 1e6) return trim(v / 1e6, 2) + "M";
    if (a >= 1e3) return trim(v / 1e3, 2) + "k";
    if (a >= 10) return trim(v, 1);
    return trim(v, 3);
  }
  function micros(v) {
    if (v >= 1e6) return trim(v / 1e6, 2) + "s";
    if (v >= 1e3) return trim(v / 1e3, 2) + "ms";
    return trim(v, 0) + "us";
  }
  function fmt(unit) {
    return unit === "us" ? micros : num;
  }
  var FONT = "10px system-ui, sans-serif";
  // Whole seconds on the time axis.
  var XINCRS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400];
  function fromZero(u, min, max) {
    return [0, max > 0 ? max * 1.05 : 1];
  }

  // Zoom of one chart applied to the other charts of its step.
  var syncing = false;
  function zoomAll(plots) {
    return function (u, key) {
      if (key !== "x" || syncing) return;
      syncing = true;
      plots.forEach(function (p) {
        if (p !== u) p.setScale("x", { min: u.scales.x.min, max: u.scales.x.max });
      });
      syncing = false;
    };
  }

  // A step's throughput and response time take the page's width; its other figures (CPU,
  // IO, memory, gauges) sit beneath, several to a row, on the same time axis.
  function isMain(c) {
    return c.title === "throughput" || c.title.indexOf("response time") === 0;
  }
  function height(c) {
    return isMain(c) ? 200 : 130;
  }

  // The Insert Benchmark's overview: every step's throughput over time in one chart, the steps
  // one after the other (a gap between two), each run's main op (queries in query steps,
  // inserts in the others).
  function overview(steps, host) {
    var x = [], lines = {}, order = [], marks = [], t = 0;
    steps.forEach(function (step) {
      var c = step.charts.filter(function (c) { return c.title === "throughput"; })[0];
      if (!c) return;
      var own = c.series.filter(function (s) { return !s.right && s.label !== "writer target"; });
      var re = own.some(function (s) { return /query$/.test(s.label); }) ? /query$/ : /insert$/;
      var picked = own.filter(function (s) { return re.test(s.label); });
      if (!picked.length) picked = own.slice(0, 1);
      if (!picked.length) return;
      if (x.length) { x.push(t); t += 1; Object.keys(lines).forEach(function (k) { lines[k].values.push(null); }); }
      marks.push({ t: t, name: step.step });
      var n = step.x.length;
      picked.forEach(function (s) {
        var key = s.label.replace(/ ?(query|insert|[a-z_]+)$/, "") || "throughput";
        if (!lines[key]) {
          lines[key] = { label: key, color: s.color, values: x.map(function () { return null; }) };
          order.push(key);
        }
        var l = lines[key];
        for (var i = 0; i < n; i++) l.values.push(s.values[i] == null ? null : s.values[i]);
      });
      for (var i = 0; i < n; i++) x.push(t + i);
      t += n;
      Object.keys(lines).forEach(function (k) { while (lines[k].values.length < x.length) lines[k].values.push(null); });
    });
    if (marks.length < 2) return null;
    var box = document.createElement("div");
    box.className = "tchart main";
    host.appendChild(box);
    var title = document.createElement("div");
    title.className = "ttitle";
    title.textContent = "throughput of every step (rows/s in loads, queries/s in query steps)";
    box.appendChild(title);
    var series = [{ label: "s" }].concat(order.map(function (k) {
      return { label: lines[k].label, stroke: lines[k].color, width: 1.5, spanGaps: false, points: { show: false }, value: function (u, v) { return v == null ? "-" : num(v); } };
    }));
    var stepNames = function (u) {
      var ctx = u.ctx;
      ctx.save();
      ctx.strokeStyle = "#999";
      ctx.fillStyle = "#444";
      ctx.font = "11px system-ui, sans-serif";
      marks.forEach(function (m) {
        var px = u.valToPos(m.t, "x", true);
        ctx.beginPath();
        ctx.moveTo(px, u.bbox.top);
        ctx.lineTo(px, u.bbox.top + u.bbox.height);
        ctx.stroke();
        ctx.fillText(m.name, px + 3, u.bbox.top + 12);
      });
      ctx.restore();
    };
    var opts = {
      width: box.clientWidth,
      height: 240,
      series: series,
      axes: [
        { size: 24, space: 40, font: FONT, incrs: XINCRS },
        { size: 52, font: FONT, values: function (u, vs) { return vs.map(function (v) { return v == null ? "" : num(v); }); } },
      ],
      scales: { x: { time: false }, y: { range: fromZero } },
      cursor: { drag: { x: true, y: false } },
      legend: { live: true },
      hooks: { draw: [stepNames] },
    };
    var data = [x].concat(order.map(function (k) { return lines[k].values; }));
    var plot = new uPlot(opts, data, box);
    window.addEventListener("resize", function () {
      plot.setSize({ width: box.clientWidth, height: 240 });
    });
    return plot;
  }

  function draw(step, si, host) {
    var plots = [];
    window.ibenchPlots[si] = plots;
    // The boxes first: the page's grid decides how many fit a row, and each chart takes its
    // box's width.
    var boxes = step.charts.map(function (c) {
      var box = document.createElement("div");
      box.className = isMain(c) ? "tchart main" : "tchart";
      host.appendChild(box);
      return box;
    });
    step.charts.forEach(function (c, ci) {
      var box = boxes[ci];
      var width = box.clientWidth;
      var title = document.createElement("div");
      title.className = "ttitle";
      title.textContent = c.title + " (" + c.unit + (c.right_unit ? " | right: " + c.right_unit : "") + ")";
      title.title = title.textContent;
      box.appendChild(title);
      var f = fmt(c.unit);
      var series = [{ label: "s", value: function (u, v) { return v == null ? "-" : v; } }];
      c.series.forEach(function (s) {
        series.push({
          label: s.label,
          stroke: s.color,
          width: 1.5,
          dash: s.dash ? [5, 3] : undefined,
          scale: s.right ? "r" : "y",
          spanGaps: false,
          points: { show: step.x.length <= 60, size: 4 },
          value: function (u, v) { return v == null ? "-" : f(v); },
        });
      });
      var axes = [
        { size: 24, space: 30, font: FONT, incrs: XINCRS, values: function (u, vs) { return vs.map(function (v) { return trim(v, 1); }); } },
        { scale: "y", size: 52, font: FONT, values: function (u, vs) { return vs.map(function (v) { return v == null ? "" : f(v); }); } },
      ];
      if (c.right_unit) {
        axes.push({ scale: "r", side: 1, size: 40, font: FONT, grid: { show: false }, values: function (u, vs) { return vs.map(function (v) { return v == null ? "" : num(v); }); } });
      }
      var opts = {
        width: width,
        height: height(c),
        series: series,
        axes: axes,
        scales: {
          x: { time: false },
          y: c.log ? { distr: 3 } : { range: fromZero },
          r: { range: fromZero },
        },
        cursor: { sync: { key: "step-" + si, setSeries: false }, drag: { x: true, y: false } },
        legend: { live: true },
        hooks: { setScale: [zoomAll(plots)] },
      };
      var data = [step.x].concat(c.series.map(function (s) { return s.values; }));
      plots.push(new uPlot(opts, data, box));
    });
    window.addEventListener("resize", function () {
      plots.forEach(function (p, i) {
        p.setSize({ width: boxes[i].clientWidth, height: height(step.charts[i]) });
      });
    });
  }

  // Each step's charts, for whoever inspects the page (the test suite's browser check).
  window.ibenchPlots = [];
  var first = document.getElementById("ib-overview");
  window.ibenchOverview = first ? overview(steps, first) : null;
  if (first && !window.ibenchOverview) first.parentNode.style.display = "none";
  steps.forEach(function (step, si) {
    var host = document.getElementById("tl-" + si);
    if (!host) return;
    var closed = host.closest("details:not([open])");
    if (!closed) return draw(step, si, host);
    // Collapsed (a report of many steps): drawn when first opened, at its real width.
    closed.addEventListener("toggle", function once() {
      closed.removeEventListener("toggle", once);
      draw(step, si, host);
    });
  });
  // A link to a collapsed section opens it.
  function openTarget() {
    var t = location.hash && document.getElementById(location.hash.slice(1));
    if (t && t.tagName === "DETAILS") t.open = true;
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
