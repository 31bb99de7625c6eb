// The console's only script: confirmation of state-changing forms, an
// optional auto-refresh of every list and chart, and the intents list's
// selection for bulk actions. Loaded from the console itself; the
// Content-Security-Policy forbids inline script.
//
// Auto-refresh is off until an operator turns it on, and remembered in
// this browser (localStorage) for every page. It fetches the page again
// every five seconds and swaps in the parts marked data-live (by id), so
// the page neither flickers nor loses its scroll position or what is typed
// in its forms; it skips a round while the tab is hidden, a field in a
// live part has the focus, or rows of a live part are selected (a refresh
// would move the rows under the selection). A session that ended, an
// answer that is not the page, or a page whose live parts changed (an
// intent that ended loses its actions) stops it with a full reload, which
// shows why.
"use strict";
(function () {
  var key = "sm-autorefresh";
  var every = 5000;

  // Delegated, so that forms swapped in by a refresh ask too.
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (form.matches && form.matches("form[data-confirm]") && !window.confirm(form.getAttribute("data-confirm"))) {
      ev.preventDefault();
    }
  });

  // Selection for bulk actions: "select all" toggles the page's rows, and
  // the bar counts the selection. Delegated and read afresh each time, so
  // that rows swapped in by a refresh count too. Without script, rows are
  // ticked one by one and the server counts.
  function selectable() { return document.querySelectorAll("#intents input.select"); }
  function counted() {
    var all = document.getElementById("select-all");
    var count = document.getElementById("selected-count");
    var apply = document.getElementById("bulk-apply");
    if (!all || !count || !apply) { return; }
    var rows = selectable();
    var n = 0;
    rows.forEach(function (box) { if (box.checked) { n++; } });
    count.textContent = n === 1 ? "1 selected" : n + " selected";
    apply.disabled = n === 0;
    all.checked = n > 0 && n === rows.length;
  }
  document.addEventListener("change", function (ev) {
    var box = ev.target;
    if (!box.matches) { return; }
    if (box.matches("#select-all")) {
      selectable().forEach(function (row) { row.checked = box.checked; });
      counted();
    } else if (box.matches("#intents input.select")) {
      counted();
    }
  });

  function remembered() {
    try { return localStorage.getItem(key) === "1"; } catch (e) { return false; }
  }
  function remember(on) {
    try { localStorage.setItem(key, on ? "1" : "0"); } catch (e) { /* private mode: this page only */ }
  }

  function live() { return document.querySelectorAll("[data-live][id]"); }

  // busy names why a round is skipped ("" when it is not): it is asked
  // before the fetch and again before the swap, so that a selection made
  // or a field focused while the page was being fetched is kept. The
  // reason is left on the document (data-refresh-paused) until the next
  // swap, for whoever wonders why the page stands still.
  function busy() {
    var f = document.activeElement;
    var why = "";
    if (document.hidden) {
      why = "hidden";
    } else if (f && f.closest && f.closest("[data-live]") && f.matches("input, select, textarea")) {
      why = "focus";
    } else if (document.querySelector("[data-live] input.select:checked") !== null) {
      why = "selection";
    }
    if (why) { document.documentElement.setAttribute("data-refresh-paused", why); }
    return why;
  }

  function refresh() {
    return fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } }).then(function (res) {
      var type = res.headers.get("Content-Type") || "";
      if (!res.ok || res.redirected || type.indexOf("text/html") !== 0) {
        throw new Error("not the page");
      }
      return res.text();
    }).then(function (html) {
      if (busy()) { return; }
      var next = new DOMParser().parseFromString(html, "text/html");
      var missing = false;
      live().forEach(function (part) {
        var fresh = next.getElementById(part.id);
        if (!fresh || !fresh.hasAttribute("data-live")) { missing = true; return; }
        part.replaceWith(document.importNode(fresh, true));
      });
      if (missing) { throw new Error("the page changed"); }
      counted();
      document.documentElement.removeAttribute("data-refresh-paused");
      document.documentElement.setAttribute("data-refreshed", String(Date.now()));
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    counted();
    var box = document.getElementById("autorefresh");
    var control = document.getElementById("autorefresh-control");
    if (!box || !control || live().length === 0) {
      return;
    }
    control.hidden = false;
    box.checked = remembered();
    var timer = null;
    var arm = function () {
      if (timer) { clearTimeout(timer); timer = null; }
      if (!box.checked) { return; }
      timer = setTimeout(function () {
        if (busy()) { arm(); return; }
        refresh().then(arm, function () { location.reload(); });
      }, every);
    };
    box.addEventListener("change", function () {
      remember(box.checked);
      arm();
    });
    arm();
  });
})();
