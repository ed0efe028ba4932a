/* The book's static pages run no kernel. This script, loaded only on pages that
 * embed widgets (nb_ipywidgets_js in _config.yml), does two things:
 *
 * - An explorer whose frames were computed when the book was built (the page
 *   names their folder in <meta name="cm-frames">, the explorer carries the
 *   class cm-frames-<key>: clustermath/views/frames.py) keeps its controls
 *   working. The first time a reader touches it, static-frames.js and the
 *   explorer's index of frames are loaded (never before: the page's first
 *   load stays as light as a still); from then on each move swaps in the
 *   frame for the new value, one control at a time from the defaults.
 * - Any other widget is a still: its controls are turned off.
 *
 * Either way each slider and picture gets an accessible name, and one note per
 * page, above its first explorer, says what the controls do here and how to make
 * the explorers live (every control points at it with aria-describedby).
 * JupyterLab never loads this script, so the same explorers stay live in a
 * kernel. */
(function () {
  "use strict";
  // One note per page, above its first explorer, in words and code (never raw backticks): what the
  // controls do here, and how to make the explorers live. Every control names it (aria-describedby).
  var FRAMED = ["On this page the explorers move through pictures computed when the book was built, " +
    "one control at a time from the defaults (a published run you pick keeps its own); moving a second " +
    "control puts the others back, and a " +
    "line at the top of the explorer says so. To combine settings, open the page live with the " +
    "launch button (the rocket at the top of the page), or run ", "make lab", " in a copy of the book."];
  var STILLS = ["On this page the explorers are stills at their default values: a static page runs no " +
    "model, so their controls are switched off. To move them, open the page live with the launch " +
    "button (the rocket at the top of the page), or run ", "make lab", " in a copy of the book."];
  var MIXED = " Explorers without computed pictures are stills, their controls switched off.";
  var NOTE_ID = "cm-static-note";
  var VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]';
  var here = document.currentScript ? new URL(".", document.currentScript.src).href : "";
  var meta = document.querySelector('meta[name="cm-frames"]');
  var folder = meta ? new URL(meta.getAttribute("content"), document.baseURI).href : null;

  // frames arrive as scripts (index.js calls __cmFrames), so pages opened from file:// work too
  var loaded = window.__cmFramesData = window.__cmFramesData || {};
  window.__cmFrames = function (key, data) { loaded[key] = data; };
  var scripts = {};
  function load(src) {
    if (!scripts[src]) {
      scripts[src] = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = src;
        s.onload = resolve;
        s.onerror = function () { reject(new Error("could not load " + src)); };
        document.head.appendChild(s);
      });
    }
    return scripts[src];
  }

  function frameKey(root) {
    if (!folder) return null;
    for (var i = 0; i < root.classList.length; i++) {
      var c = root.classList[i];
      if (c.indexOf("cm-frames-") === 0) return c.slice("cm-frames-".length);
    }
    return null;
  }

  // the page's note: created above the first explorer's cell, its words set from what the page holds
  function pageNote() {
    var n = document.getElementById(NOTE_ID);
    if (n) return n;
    var first = document.querySelector(VIEW);
    if (!first) return null;
    var cell = first.closest(".cell") || first.closest(".cell_output") || first.parentNode;
    n = document.createElement("p");
    n.className = "cm-static-note";
    n.id = NOTE_ID;
    n.setAttribute("role", "note");
    cell.parentNode.insertBefore(n, cell);
    return n;
  }

  function setNote(framed, stills) {
    var n = pageNote();
    if (!n) return;
    var parts = framed ? FRAMED : STILLS;
    var tail = parts[2] + (framed && stills ? MIXED : "");
    var text = parts[0] + parts[1] + tail;
    if (n.getAttribute("data-text") === text) return;
    n.setAttribute("data-text", text);
    n.textContent = "";
    n.appendChild(document.createTextNode(parts[0]));
    var code = document.createElement("code");
    code.textContent = parts[1];
    n.appendChild(code);
    n.appendChild(document.createTextNode(tail));
  }

  function describe(root) {
    root.querySelectorAll(".noUi-handle, input, button, select").forEach(function (el) {
      if (!el.hasAttribute("aria-describedby")) el.setAttribute("aria-describedby", NOTE_ID);
    });
  }

  // names a screen reader announces: the control's label, and its value as the readout shows it
  function label(root, frozen) {
    root.querySelectorAll(".widget-slider, .widget-hslider").forEach(function (slider) {
      var name = slider.querySelector(".widget-label");
      name = name ? name.textContent.trim() : "";
      var readout = slider.querySelector(".widget-readout");
      var value = readout ? readout.textContent.trim() : "";
      slider.querySelectorAll(".noUi-handle").forEach(function (handle) {
        if (frozen) {
          if (name) handle.setAttribute("aria-label", name + (value ? ": " + value : ""));
        } else {
          if (name) handle.setAttribute("aria-label", name);
          if (value) handle.setAttribute("aria-valuetext", value);
        }
      });
    });
  }

  function alt(root, text) {
    var heading = root.querySelector(".widget-html b");
    var flags = [].map.call(root.querySelectorAll(".cm-flag"), function (f) { return f.textContent.trim(); });
    root.querySelectorAll("img").forEach(function (img) {
      if (img.getAttribute("alt") && !text) return;
      var t = (heading ? heading.textContent.trim() : "Explorer") + ": " + (text || "picture at the default values");
      img.setAttribute("alt", t + (flags.length ? ". " + flags.join(" ") : ""));
    });
  }
  window.__cmFramesAlt = alt;
  window.__cmFramesLabel = label;

  function freeze(root) {
    root.classList.add("cm-frozen");
    root.querySelectorAll("input, button, select, textarea").forEach(function (el) {
      el.disabled = true;
      el.setAttribute("aria-disabled", "true");
      el.tabIndex = -1;
    });
    root.querySelectorAll(".noUi-target").forEach(function (el) { el.setAttribute("disabled", ""); });
    root.querySelectorAll(".widget-readout").forEach(function (el) {
      el.setAttribute("contenteditable", "false");
    });
    root.querySelectorAll(".noUi-handle").forEach(function (handle) {
      handle.setAttribute("tabindex", "-1");
      handle.setAttribute("aria-disabled", "true");
    });
    label(root, true);
    alt(root);
  }
  window.__cmFramesFreeze = freeze;

  // Load the frames on the first touch (focus by keyboard, pointer down), then hand over to static-frames.js.
  function start(root, key) {
    if (root.__cmFrames) return root.__cmFrames;
    root.__cmFrames = load(here + "static-frames.js")
      .then(function () { return load(folder + key + "/index.js"); })
      .then(function () {
        if (!loaded[key]) throw new Error("no frames in " + folder + key + "/index.js");
        return window.__cmFramesStart(root, key, folder + key + "/", loaded[key]);
      })
      .catch(function (err) {
        console.error("static explorer " + key + ": " + err.message + "; its controls are switched off");
        root.setAttribute("data-cm-frames", "failed");
        freeze(root);
      });
    return root.__cmFrames;
  }

  function arm(root, key) {
    if (root.getAttribute("data-cm-frames") === "failed") return;
    label(root, false);
    alt(root);
    // each control's description: the page's note saying what the controls do here
    describe(root);
    root.querySelectorAll(".widget-toggle-button").forEach(function (b) {
      b.setAttribute("aria-pressed", b.classList.contains("mod-active") ? "true" : "false");
    });
    if (root.hasAttribute("data-cm-frames")) return;
    root.setAttribute("data-cm-frames", "armed");
    var touch = function () { start(root, key); };
    root.addEventListener("focusin", touch);
    root.addEventListener("pointerdown", touch);
  }

  function sweep() {
    // idempotent: widgets render asynchronously, so each sweep handles whatever has appeared since
    var framed = 0, stills = 0;
    document.querySelectorAll(".jupyter-widgets").forEach(function (el) {
      if (el.parentElement && el.parentElement.closest(".jupyter-widgets")) return;
      var key = frameKey(el);
      if (key && el.getAttribute("data-cm-frames") !== "failed") { arm(el, key); framed += 1; }
      else { freeze(el); stills += 1; }
    });
    if (document.querySelector(VIEW)) setNote(framed > 0 || (!stills && !!folder), stills > 0);
    document.documentElement.classList.add("cm-static-widgets");
  }

  function begin() {
    sweep();
    var pending = false;
    new MutationObserver(function () {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(function () { pending = false; sweep(); });
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", begin);
  else begin();
})();
