// Layout check for timeline/test.sh: appended to a copy of a timeline page (its
// content security policy removed so this script may run), it measures what
// Chromium drew and writes what is wrong into <pre id="layout-check"> as JSON:
// a label outside the picture, two labels of a row overlapping, a label over a
// shape of its row, a label inside a span that does not fit in it, a row label
// over its lane's name, session labels overlapping.
(function () {
  "use strict";
  var problems = [], texts = 0, tol = 0.5;
  var svg = document.getElementById("tl");
  var box = function (el) { return el.getBoundingClientRect(); };
  var overlap = function (a, b) {
    return a.left < b.right - tol && b.left < a.right - tol && a.top < b.bottom - tol && b.top < a.bottom - tol;
  };
  var name = function (el) { return JSON.stringify(el.textContent.slice(0, 60)); };
  // A horizontal or vertical line has an empty box: give it its stroke.
  var shapeBox = function (el) {
    var b = box(el);
    return { left: b.left - (b.width ? 0 : 1), right: b.right + (b.width ? 0 : 1), top: b.top - (b.height ? 0 : 1), bottom: b.bottom + (b.height ? 0 : 1) };
  };
  var frame = box(svg);
  svg.querySelectorAll("g.row").forEach(function (row, ri) {
    var labels = [], shapes = [];
    row.querySelectorAll("text").forEach(function (t) {
      texts++;
      var b = box(t);
      if (b.left < frame.left - tol || b.right > frame.right + tol) {
        problems.push("row " + ri + ": " + name(t) + " leaves the picture (" + b.left.toFixed(1) + ".." + b.right.toFixed(1) + " of " + frame.left.toFixed(1) + ".." + frame.right.toFixed(1) + ")");
      }
      if (t.classList.contains("inside")) {
        var span = box(t.parentNode.querySelector("rect"));
        if (b.left < span.left - tol || b.right > span.right + tol) {
          problems.push("row " + ri + ": " + name(t) + " does not fit in its span");
        }
        return;
      }
      labels.push(t);
    });
    row.querySelectorAll("rect, circle, path, line").forEach(function (s) { shapes.push(s); });
    labels.forEach(function (t, i) {
      var b = box(t);
      for (var j = 0; j < i; j++) {
        if (overlap(b, box(labels[j]))) problems.push("row " + ri + ": " + name(labels[j]) + " and " + name(t) + " overlap");
      }
      shapes.forEach(function (s) {
        var sb = shapeBox(s);
        if (overlap(b, sb)) problems.push("row " + ri + ": " + name(t) + " is drawn over a " + s.tagName + " (" + s.getAttribute("class") + ")");
      });
    });
  });
  svg.querySelectorAll("g.lane").forEach(function (lane) {
    var n = box(lane.querySelector(".lane-name"));
    svg.querySelectorAll(".row-label").forEach(function (l) {
      if (overlap(n, box(l))) problems.push("row label " + name(l) + " is drawn over the lane name " + name(lane.querySelector(".lane-name")));
    });
  });
  var marks = svg.querySelectorAll(".vlabel");
  for (var i = 0; i < marks.length; i++) {
    for (var j = 0; j < i; j++) {
      if (overlap(box(marks[i]), box(marks[j]))) problems.push("session labels " + name(marks[j]) + " and " + name(marks[i]) + " overlap");
    }
  }
  var out = document.createElement("pre");
  out.id = "layout-check";
  out.textContent = JSON.stringify({ texts: texts, problems: problems });
  document.body.appendChild(out);
})();
