// The console's only script: confirmation of state-changing forms and an
// optional auto-refresh of the overview. Loaded from the console itself;
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
});
