// The console's only script: confirmation of state-changing forms, an
// optional auto-refresh of the overview, and the intents list's selection. Loaded from the console itself;
// the Content-Security-Policy forbids inline script.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (ev) {
      if (!window.confirm(form.getAttribute("data-confirm"))) {
        ev.preventDefault();
      }
    });
  });
  var box = document.getElementById("autorefresh");
  if (box) {
    box.checked = sessionStorage.getItem("sm-autorefresh") === "1";
    var timer = null;
    var arm = function () {
      if (timer) { clearTimeout(timer); timer = null; }
      if (box.checked) { timer = setTimeout(function () { location.reload(); }, 5000); }
    };
    box.addEventListener("change", function () {
      sessionStorage.setItem("sm-autorefresh", box.checked ? "1" : "0");
      arm();
    });
    arm();
  }
  // Selection for bulk actions: "select all" toggles the page's rows, and
  // the bar counts the selection. Without script, rows are ticked one by
  // one and the server counts.
  var all = document.getElementById("select-all");
  var rows = document.querySelectorAll("#intents input.select");
  var count = document.getElementById("selected-count");
  var apply = document.getElementById("bulk-apply");
  if (all && count && apply) {
    var update = function () {
      var n = 0;
      rows.forEach(function (box) { if (box.checked) { n++; } });
      count.textContent = n === 1 ? "1 selected" : n + " selected";
      apply.disabled = n === 0;
      all.checked = n > 0 && n === rows.length;
    };
    all.addEventListener("change", function () {
      rows.forEach(function (box) { box.checked = all.checked; });
      update();
    });
    rows.forEach(function (box) { box.addEventListener("change", update); });
    update();
  }
});
