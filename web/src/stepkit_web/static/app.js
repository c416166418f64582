// Enhancements only: every page works without this script.
(function () {
  "use strict";
  // Focus the error summary (autofocus does it too, where the browser honours it).
  var summary = document.querySelector(".error-summary");
  if (summary) { summary.focus(); }
  // The address to keep: a Copy button (the field itself works without the script).
  var copy = document.querySelector("button[data-copy]");
  if (copy && navigator.clipboard) {
    copy.hidden = false;
    copy.addEventListener("click", function () {
      var field = document.getElementById(copy.getAttribute("data-copy"));
      var status = document.getElementById("copy-status");
      navigator.clipboard.writeText(field.value).then(function () {
        if (status) { status.textContent = "The address is copied."; }
      }, function () {
        field.select();
        if (status) { status.textContent = "Select the address and copy it."; }
      });
    });
  }
  // Date and time answers in the participant's own zone: the offset field is filled in with
  // this device's UTC offset at the chosen date (the server falls back to UTC without it).
  function offsetAt(value) {
    var d = value ? new Date(value) : new Date();
    if (isNaN(d.getTime())) { d = new Date(); }
    var minutes = -d.getTimezoneOffset();
    var sign = minutes < 0 ? "-" : "+";
    minutes = Math.abs(minutes);
    var pad = function (n) { return (n < 10 ? "0" : "") + n; };
    return sign + pad(Math.floor(minutes / 60)) + ":" + pad(minutes % 60);
  }
  Array.prototype.forEach.call(document.querySelectorAll("input[data-offset-for]"), function (off) {
    var value = document.getElementById(off.getAttribute("data-offset-for"));
    if (off.getAttribute("data-answered") === "1") { return; }
    var update = function () { off.value = offsetAt(value && value.value); };
    update();
    if (value) { value.addEventListener("change", update); }
  });
  // The signature pad: strokes drawn on the canvas become SVG path data in a hidden field (the
  // typed name, which works without the script and from the keyboard, is the alternative).
  var pad = document.getElementById("signature-pad");
  if (pad && pad.getContext) {
    var box = pad.parentNode;
    var field = document.getElementById("signature-path");
    var ctx = pad.getContext("2d");
    var drawing = false;
    var parts = [];
    box.hidden = false;
    ctx.lineWidth = 2;
    ctx.lineCap = "round";
    var point = function (e) {
      var r = pad.getBoundingClientRect();
      var x = (e.clientX - r.left) * pad.width / r.width;
      var y = (e.clientY - r.top) * pad.height / r.height;
      return [Math.round(x * 10) / 10, Math.round(y * 10) / 10];
    };
    pad.addEventListener("pointerdown", function (e) {
      var p = point(e);
      drawing = true;
      parts.push("M " + p[0] + " " + p[1]);
      ctx.beginPath();
      ctx.moveTo(p[0], p[1]);
      if (pad.setPointerCapture) { pad.setPointerCapture(e.pointerId); }
      e.preventDefault();
    });
    pad.addEventListener("pointermove", function (e) {
      if (!drawing) { return; }
      var p = point(e);
      parts.push("L " + p[0] + " " + p[1]);
      ctx.lineTo(p[0], p[1]);
      ctx.stroke();
      field.value = parts.join(" ");
    });
    var stop = function () { drawing = false; };
    pad.addEventListener("pointerup", stop);
    pad.addEventListener("pointercancel", stop);
    document.getElementById("signature-clear").addEventListener("click", function () {
      parts = [];
      field.value = "";
      ctx.clearRect(0, 0, pad.width, pad.height);
    });
  }
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
