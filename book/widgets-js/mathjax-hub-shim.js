/* Local addition (not from npm), loaded with `defer` after MathJax 3.
 * @jupyter-widgets/base's typeset() (in embed-amd.js) runs for every widget
 * description and HTMLMath value and, whenever window.MathJax exists, calls
 * the MathJax 2 API: MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]).
 * The book loads MathJax 3, which has no Hub, so each call threw "Cannot read
 * properties of undefined (reading 'Queue')". This gives MathJax 3 a minimal
 * Hub whose Queue typesets those elements with MathJax 3's typesetPromise,
 * chained on MathJax.startup.promise (as MathJax 3's documentation advises).
 * Deferred scripts run in document order, after the (deferred) MathJax script
 * has replaced its configuration object with the real MathJax 3 object, and
 * before the window "load" event on which embed-amd.js renders the widgets. */
(function () {
  "use strict";
  var mj = window.MathJax;
  if (!mj || typeof mj !== "object" || mj.Hub) return;  // no MathJax, or MathJax 2
  mj.Hub = {
    Queue: function () {
      var elements = [];
      for (var i = 0; i < arguments.length; i++) {
        var a = arguments[i];
        if (Array.isArray(a) && a[0] === "Typeset" && a[2]) elements.push(a[2]);
      }
      var startup = window.MathJax.startup;
      if (!elements.length || !startup || !startup.promise) return;  // MathJax 3 did not load
      startup.promise = startup.promise
        .then(function () { return window.MathJax.typesetPromise(elements); })
        .catch(function (err) { console.warn("MathJax could not typeset a widget:", err); });
    }
  };
})();
