(function () {
  "use strict";
  var svg = document.getElementById("tl");
  if (svg) {
    var x0 = +svg.dataset.x0, x1 = +svg.dataset.x1, msPerPx = +svg.dataset.msPerPx, start = +svg.dataset.startMs;
    var cursor = document.getElementById("cursor"), readout = document.getElementById("cursor-label");
    svg.addEventListener("mousemove", function (ev) {
      var x = ev.clientX - svg.getBoundingClientRect().left;
      var show = x >= x0 && x <= x1 ? "visible" : "hidden";
      cursor.setAttribute("visibility", show);
      readout.setAttribute("visibility", show);
      if (show === "hidden") return;
      cursor.setAttribute("x1", x);
      cursor.setAttribute("x2", x);
      readout.setAttribute("x", x + 4);
      readout.textContent = ((start + (x - x0) * msPerPx) / 1000).toFixed(2) + " s";
    });
    svg.addEventListener("mouseleave", function () {
      cursor.setAttribute("visibility", "hidden");
      readout.setAttribute("visibility", "hidden");
    });
  }
  // Hovering anything about a job (or a call) marks everything about it: its calls,
  // holds, decision, outcome and notes, in the picture and in the tables.
  var related = document.querySelectorAll("[data-job],[data-call]");
  function same(a, b) {
    return (a.dataset.job && a.dataset.job === b.dataset.job) || (a.dataset.call && a.dataset.call === b.dataset.call);
  }
  related.forEach(function (el) {
    el.addEventListener("mouseenter", function () {
      related.forEach(function (o) { if (same(el, o)) o.classList.add("hl"); });
    });
    el.addEventListener("mouseleave", function () {
      related.forEach(function (o) { o.classList.remove("hl"); });
    });
  });
  document.documentElement.setAttribute("data-timeline", "ready");
})();
