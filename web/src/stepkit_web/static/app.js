// Enhancements only: every page works without this script.
(function () {
  "use strict";
  // Focus the error summary (autofocus does it too, where the browser honours it).
  var summary = document.querySelector(".error-summary");
  if (summary) { summary.focus(); }
  // A timed step: press Continue when the engine's next deadline comes.
  var form = document.querySelector("form[data-deadline-ms]");
  var tick = document.querySelector("button[data-tick]");
  if (form && tick) {
    var ms = parseInt(form.getAttribute("data-deadline-ms"), 10);
    if (!isNaN(ms) && ms >= 0) {
      var remaining = document.querySelector(".remaining");
      var end = Date.now() + ms;
      var timer = setInterval(function () {
        var left = Math.max(0, Math.ceil((end - Date.now()) / 1000));
        if (remaining) { remaining.textContent = String(left); }
        if (Date.now() >= end) { clearInterval(timer); tick.click(); }
      }, 250);
    }
  }
})();
