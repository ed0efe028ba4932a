/* The book's static pages run no kernel: a widget's controls would move and
 * nothing would follow them. This script, loaded only on pages that embed
 * widgets (nb_ipywidgets_js in _config.yml), turns every control off, gives
 * each slider and picture an accessible name, and puts one line above each
 * explorer saying how to make it live. JupyterLab never loads it, so the same
 * explorers stay live in a kernel. */
(function () {
  "use strict";
  var NOTE = "A still of this explorer at its default values: a static page runs no model, " +
    "so its controls are switched off. To move them, open the page live with the launch " +
    "button (the rocket at the top of the page), or run `make lab` in a copy of the book.";
  var VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]';

  function note(script) {
    var prev = script.parentNode && script.parentNode.querySelector(".cm-static-note");
    if (prev) return;
    var p = document.createElement("p");
    p.className = "cm-static-note";
    p.setAttribute("role", "note");
    p.textContent = NOTE;
    script.parentNode.insertBefore(p, script.parentNode.firstChild);
  }

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
    root.querySelectorAll(".widget-slider, .widget-hslider").forEach(function (slider) {
      var label = slider.querySelector(".widget-label");
      var name = label ? label.textContent.trim() : "";
      var readout = slider.querySelector(".widget-readout");
      var value = readout ? readout.textContent.trim() : "";
      slider.querySelectorAll(".noUi-handle").forEach(function (handle) {
        handle.setAttribute("tabindex", "-1");
        handle.setAttribute("aria-disabled", "true");
        if (name) handle.setAttribute("aria-label", name + (value ? ": " + value : ""));
      });
    });
    // the picture's alt text: the explorer's heading, and any flag its table raises
    var heading = root.querySelector(".widget-html b");
    var flags = [].map.call(root.querySelectorAll(".cm-flag"), function (f) { return f.textContent.trim(); });
    root.querySelectorAll("img").forEach(function (img) {
      if (img.getAttribute("alt")) return;
      var text = (heading ? heading.textContent.trim() : "Explorer") + ": picture at the default values";
      img.setAttribute("alt", text + (flags.length ? ". " + flags.join(" ") : ""));
    });
  }

  function sweep() {
    document.querySelectorAll(VIEW).forEach(note);
    // idempotent: widgets render asynchronously, so each sweep freezes whatever has appeared since
    document.querySelectorAll(".jupyter-widgets").forEach(function (el) {
      if (!el.parentElement || !el.parentElement.closest(".jupyter-widgets")) freeze(el);
    });
    document.documentElement.classList.add("cm-static-widgets");
  }

  function start() {
    sweep();
    var pending = false;
    new MutationObserver(function () {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(function () { pending = false; sweep(); });
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
