/* Local addition (not from npm), loaded between require.js and embed-amd.js.
 * embed-amd.js resolves its Font Awesome files against the URL that requirejs
 * gives its modules, which by default is relative to the page
 * (<page dir>/@jupyter-widgets/html-manager/dist/...), where nothing exists.
 * Point those module URLs, and the assets path, at this folder (_static/),
 * which holds the *.woff2 files. The modules themselves are all defined in
 * embed-amd.js, so requirejs never fetches these URLs. */
(function () {
  var here = new URL(".", document.currentScript.src).href;
  window.__jupyter_widgets_assets_path__ = here;
  if (!window.requirejs) return;  // require.js failed to load: nothing to do
  window.requirejs.config({
    paths: {
      "@jupyter-widgets/html-manager/dist/libembed-amd": here + "libembed-amd",
      "@jupyter-widgets/html-manager": here + "html-manager",
      "@jupyter-widgets/controls": here + "controls",
      "@jupyter-widgets/base": here + "base"
    }
  });
})();
