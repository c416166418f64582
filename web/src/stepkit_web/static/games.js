// The games' pages (templates/_game.html): draws what the engine's game state says when it says
// it, and posts each input with the moment it happened. The engine decides everything else.
//
// Time: the page was drawn when the step had run `data-elapsed` seconds; from then on the step's
// time is that plus performance.now() since this script started. Every time in the game state
// (showFrom, tapsFrom ...) is in seconds of that step time; every input is posted with `at`,
// milliseconds of it, and the server maps it onto the session's clock.
(function () {
  "use strict";
  var form = document.querySelector("form.game[data-game]");
  if (!form || !window.fetch || !window.URLSearchParams) { return; }
  var game = JSON.parse(form.getAttribute("data-game"));
  var drawnAt = parseFloat(form.getAttribute("data-elapsed")) * 1000;
  var t0 = performance.now();
  var stepId = form.querySelector("input[name=_step]").value;
  var status = document.getElementById("game-status");
  var timers = [];

  function stepTime() { return drawnAt + (performance.now() - t0); }
  function at(seconds, fn) {  // runs fn when the step's time is `seconds`
    timers.push(setTimeout(fn, Math.max(0, seconds * 1000 - stepTime())));
  }
  function clearTimers() { timers.forEach(clearTimeout); timers = []; }
  function say(text) { if (status) { status.textContent = text; } }

  // Inputs go one at a time, in order, each with its own time.
  var queue = [];
  var busy = false;
  function send(fields) {
    fields.at = String(Math.max(0, Math.round(stepTime())));
    queue.push(fields);
    pump();
  }
  function pump() {
    // data-busy: "1" while inputs are on their way, "0" once every reply is drawn.
    form.setAttribute("data-busy", busy || queue.length > 0 ? "1" : "0");
    if (busy || queue.length === 0) { return; }
    busy = true;
    var fields = queue.shift();
    var body = new URLSearchParams();
    body.append("_step", stepId);
    body.append("_token", form.querySelector("input[name=_token]").value);
    Object.keys(fields).forEach(function (k) { body.append(k, fields[k]); });
    fetch(form.action, {method: "POST", body: body, credentials: "same-origin",
                        headers: {"Accept": "application/json"}})
      .then(function (r) { return r.json().then(function (j) { return [r.status, j]; }); })
      .then(function (answer) {
        busy = false;
        var code = answer[0], reply = answer[1];
        if (code === 200 && reply.status === "inProgress" && reply.step === stepId &&
            reply.active === "running" && reply.game) {
          update(reply.game);
          scheduleTick(reply.deadlineMs);
          pump();
        } else if (code === 422) {
          queue = [];
          say(reply.message || "That was not taken.");
          pump();
        } else {
          window.location.replace(window.location.pathname);  // the next step, or the page again
        }
      }, function () {
        busy = false;
        queue = [];
        say("The answer could not be sent: check the connection, then reload the page.");
        pump();
      });
  }

  // The game's next moment (a timeout, a window closing): ticked when it comes, by the server's
  // clock, which the page's is never ahead of (it started when the page arrived).
  var tickTimer = null;
  function scheduleTick(ms) {
    if (tickTimer !== null) { clearTimeout(tickTimer); tickTimer = null; }
    if (typeof ms === "number" && !isNaN(ms)) {
      tickTimer = setTimeout(function () { tickTimer = null; send({type: "tick"}); }, ms + 50);
    }
  }

  // Buttons post through the script (their plain form post is the way without it).
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var button = e.submitter;
    if (button && button.name === "target" && !button.disabled) {
      onTarget(parseInt(button.value, 10), button);
    }
  });

  // -- spatial span memory ----------------------------------------------------------------
  var board = document.getElementById("span-board");
  var shownGame = null;

  function tiles() { return Array.prototype.slice.call(board.querySelectorAll(".tile")); }
  function drawBoard(g) {
    if (tiles().length !== g.rows * g.columns) {
      board.textContent = "";
      for (var i = 0; i < g.rows * g.columns; i++) {
        var b = document.createElement("button");
        b.type = "submit";
        b.name = "target";
        b.value = String(i);
        b.className = "tile";
        b.setAttribute("data-tile", String(i));
        b.setAttribute("aria-label", "Tile " + (i + 1));
        board.appendChild(b);
      }
      board.className = "span-board cols-" + g.columns;
    }
    tiles().forEach(function (t) { t.classList.remove("lit", "tapped"); });
  }
  function playSpan(g) {
    clearTimers();
    shownGame = g.gameNumber;
    drawBoard(g);
    var all = tiles();
    all.forEach(function (t) { t.disabled = true; });
    board.setAttribute("data-phase", "showing");
    say("Game " + g.gameNumber + ": watch " + g.sequence.length + " tiles light up.");
    g.sequence.forEach(function (tile, i) {
      at(g.showFrom + i * g.playSpeed, function () {
        all.forEach(function (t) { t.classList.remove("lit"); });
        all[tile].classList.add("lit");
      });
    });
    at(g.tapsFrom, function () {
      all.forEach(function (t) { t.classList.remove("lit"); t.disabled = false; });
      board.setAttribute("data-phase", "tapping");
      say("Your turn: tap the " + g.sequence.length + " tiles in the " +
          (g.reversed ? "reverse " : "") + "order they lit up.");
    });
  }
  function spanUpdate(g) {
    if (g.gameNumber !== shownGame) { playSpan(g); }
  }

  // -- Stroop -------------------------------------------------------------------------------
  function stroopUpdate(g) {
    var word = document.getElementById("stroop-word");
    word.className = "stroop-word ink-" + g.color;
    word.querySelector(".word").textContent = String(g.text || "").toUpperCase();
    word.querySelector(".ink-name").textContent = ", printed in " + g.color;
    say("Word " + g.attempt + " of " + g.numberOfAttempts +
        ": choose the colour the word is printed in (or press its first letter).");
  }

  // -- trail making --------------------------------------------------------------------------
  var trail = document.getElementById("trail-board");
  function trailUpdate(g, tapped) {
    var errors = game.numberOfErrors;
    Array.prototype.forEach.call(trail.querySelectorAll(".target"), function (t) {
      var k = parseInt(t.value, 10);
      t.classList.toggle("done", k < g.next);
      t.classList.remove("error");
      if (k < g.next) { t.setAttribute("aria-pressed", "true"); } else { t.removeAttribute("aria-pressed"); }
    });
    var points = [];
    for (var k = 0; k < g.next; k++) {
      points.push(g.targets[k].x * g.columns + "," + g.targets[k].y * g.rows);
    }
    document.getElementById("trail-line").setAttribute("points", points.join(" "));
    // What was tapped, never what comes next: finding it is the test.
    if (g.numberOfErrors > errors && tapped) {
      tapped.classList.add("error");
      say("Not that one.");
    } else if (g.next > 0) {
      say(g.targets[g.next - 1].label + " done.");
    }
  }

  // -- reaction time -------------------------------------------------------------------------
  // The engine takes motion samples (acceleration in g) and counts one at or over the threshold
  // as the response; a press of the button (or the space bar) is reported as such a sample, of
  // the threshold's size, at the moment of the press.
  var signal = document.getElementById("reaction-signal");
  var NEWS = {early: "Too soon: wait for the circle to light up.", timeout: "Too slow this time.",
              success: "Got it."};
  function reactionUpdate(g) {
    clearTimers();
    signal.classList.remove("on");
    if (g.over) { return; }
    var outcome = g.lastOutcome ? (NEWS[g.lastOutcome.outcome] || "") + " " : "";
    say(outcome + "Attempt " + g.attempt + " of " + g.numberOfAttempts +
        ": when the circle lights up, press as quickly as you can.");
    at(g.stimulusAt, function () { signal.classList.add("on"); say("Now!"); });
    at(g.timeoutAt, function () { signal.classList.remove("on"); });
  }
  function press() {
    send({type: "sample", x: String(game.thresholdAcceleration), y: "0", z: "0"});
  }

  var lastTapped = null;
  function update(g) {
    if (g.type === "spatialSpanMemory") { spanUpdate(g); } else if (g.type === "stroop") { stroopUpdate(g); }
    else if (g.type === "trailmaking") { trailUpdate(g, lastTapped); }
    else if (g.type === "reactionTime") { reactionUpdate(g); }
    game = g;
  }

  function onTarget(target, button) {
    lastTapped = button;
    if (game.type === "spatialSpanMemory") {
      if (board.getAttribute("data-phase") !== "tapping") { return; }
      button.classList.add("tapped");
    }
    send({type: "tap", target: String(target)});
  }

  scheduleTick(parseInt(form.getAttribute("data-deadline-in"), 10));
  if (game.type === "spatialSpanMemory" && board) {
    playSpan(game);
  } else if (game.type === "reactionTime" && signal) {
    reactionUpdate(game);
    document.getElementById("reaction-press").addEventListener("click", press);
    document.addEventListener("keydown", function (e) {
      if ((e.key === " " || e.code === "Space") && !e.repeat && e.target.id !== "reaction-press") {
        e.preventDefault();
        press();
      }
    });
  } else if (game.type === "stroop") {
    document.addEventListener("keydown", function (e) {
      if (e.altKey || e.ctrlKey || e.metaKey || e.repeat) { return; }
      var key = String(e.key || "").toLowerCase();
      var button = form.querySelector("button[data-key='" + key + "']");
      if (key.length === 1 && button) {
        e.preventDefault();
        send({type: "key", key: key});
      }
    });
  }
})();
