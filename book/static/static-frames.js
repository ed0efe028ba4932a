/* Frames for one explorer on a static page: loaded by static-widgets.js the first time a reader
 * touches an explorer whose frames were computed when the book was built
 * (clustermath/views/frames.py writes them; book/_ext/static_frames.py says where).
 *
 * The explorer's own widgets stay on the page: sliders, checkboxes and toggles move as they do
 * live (mouse, touch, keyboard). After each move this script reads every control, looks up the
 * frame for that state and shows it: the table's HTML, and the picture. A frame's picture is stored
 * as an overlay of the pixels that differ from the default picture; this script draws the default
 * picture and the overlay into a canvas of the picture's natural size and shows the result as one
 * image, so the browser scales the frame itself (laid over each other as two CSS layers and scaled
 * apart, at a pixel ratio other than 1 the default picture showed through: issue 41's ghosts).
 * The pictures come in packs (book/_ext/static_frames.py): one script per control holds the pictures of
 * the frames that control reaches, as data: URLs; a control's pack is fetched when it first takes the
 * focus or moves, so touching an explorer costs a few requests, not one per picture. An explorer framed
 * per run (chapter 6's run picker) has one pack per run: the chosen run's on the first touch, then, in
 * idle time, the packs of the runs one and two steps away (their pictures composited ahead while the
 * reader is on the picker).
 * A state that was not computed (two controls away from the defaults) puts the other controls back
 * to their defaults, visibly, and says why in one line. */
(function () {
  "use strict";
  var COMBINED = " Combined settings need a live kernel (the launch button, or `make lab`).";

  // packs arrive as scripts (pack-<name>.js calls __cmFramesPack), so pages opened from file:// work too
  var packed = window.__cmFramesPacks = window.__cmFramesPacks || {};
  var extras = window.__cmFramesExtras = window.__cmFramesExtras || {};  // a run's frames, in its pack
  window.__cmFramesPack = function (key, name, urls, extra) {
    (packed[key] = packed[key] || {})[name] = urls;
    if (extra) (extras[key] = extras[key] || {})[name] = extra;
  };

  function text(el) { return (el ? el.textContent : "").replace(/\s+/g, " ").trim(); }

  function Engine(root, key, base, data) {
    this.root = root;
    this.key = key;
    this.base = base;
    this.data = data;
    this.applying = false;
    this.pending = false;
    this.defaults = data["default"].split(",").map(Number);
    this.controls = data.controls.map(function (spec, i) {
      var el = root.querySelector(".cm-control-" + i);
      if (!el) throw new Error("control " + i + " (" + spec.label + ") is not on the page");
      return { spec: spec, el: el };
    });
    this.buttons = data.buttons.map(function (spec, j) {
      return { spec: spec, el: root.querySelector(".cm-button-" + j) };
    });
    var table = root.querySelector(".cm-frames-table");
    this.table = table && (table.querySelector(".widget-html-content") || table);
    this.img = root.querySelector("img.cm-frames-picture");
    this.original = this.img ? this.img.src : null;
    var self = this;
    if (this.img) {
      this.img.addEventListener("error", function () {
        if (self.img.src !== self.original) console.error("static explorer " + key + ": no picture at " + self.img.src);
      });
    }
    this.status = null;
    this.images = {};
    this.queue = [];
    this.loading = 0;
    this.composed = {};   // overlay file -> Promise of the object URL of the whole frame
    this.wholes = {};     // overlay file -> that whole frame as an image, decoded
    this.recent = [];     // those files, the least recently shown first
    this.ahead = [];      // files to composite before they are asked for
    this.shown = 0;       // counts the pictures asked for, so a slow one never replaces a later one
    this.packs = {};      // pack name -> Promise of its {file: data URL}
    // Frames per run (data.by: chapter 6's run picker): each run's frames come in its own pack, one
    // control at a time from that run's defaults, each slider on the run's grid (a value between its
    // stops snaps to the next stop); a control whose options the run changes gets the run's options.
    this.by = data.by ? data.by.control : -1;
    this.merged = {};     // run -> Promise: its pack loaded and its frames merged into data.frames
    this.ready = {};      // run -> true once merged (sync reads it without waiting)
    this.retargeted = {};  // control -> true where some run offers other options than the page's
    if (this.by >= 0) {
      data.by.runs.forEach(function (run) {
        Object.keys(run.labels || {}).forEach(function (i) { self.retargeted[i] = true; });
      });
      this.run = this.defaults[this.by];
    }
  }

  // -- frames per run ------------------------------------------------------------------------------
  // Promise: the run's pack loaded and its frames, tables and pictures merged into the index
  Engine.prototype.runPack = function (r) {
    var self = this, name = "r" + r;
    if (this.merged[r]) return this.merged[r];
    this.merged[r] = this.pack(name).then(function (urls) {
      var extra = (extras[self.key] || {})[name], data = self.data;
      if (!extra) throw new Error("no frames in pack " + name);
      var t0 = data.tokens.length, n0 = data.tables.length;
      extra.tokens.forEach(function (t) { data.tokens.push(t); });
      var first = extra.tables[0];
      extra.tables.forEach(function (ids) {
        if (ids.length && ids[0] === -1) {
          var whole = first.slice();
          for (var i = 1; i < ids.length; i += 2) whole[ids[i]] = ids[i + 1];
          ids = whole;
        }
        data.tables.push(ids.map(function (t) { return t + t0; }));
      });
      Object.keys(extra.frames).forEach(function (s) {
        var e = extra.frames[s].slice();
        e[0] += n0;
        data.frames[s] = e;
      });
      Object.keys(urls).forEach(function (f) { data.packs[f] = name; });
      self.ready[r] = true;
      return true;
    });
    this.merged[r].catch(function () { delete self.merged[r]; });
    return this.merged[r];
  };

  // The packs of the runs one and two steps from the chosen one (both ways), asked for together at the
  // first idle moment once the reader has touched the explorer (never during the page's first load);
  // as each arrives its frames are merged and, while the reader is on the run picker, the pictures
  // picking it would show composited ahead (prefetch), so a neighbouring run shows as fast as any move.
  var RUNS_AHEAD = [1, -1, 2, -2];
  var idle = window.requestIdleCallback
    ? function (f) { window.requestIdleCallback(f, { timeout: 200 }); }
    : function (f) { window.setTimeout(f, 20); };

  Engine.prototype.runsAhead = function () {
    if (this.by < 0 || this.runsWaiting) return;
    var self = this;
    this.runsWaiting = true;
    idle(function () {
      self.runsWaiting = false;
      var n = self.data.by.runs.length, r = self.run;
      RUNS_AHEAD.forEach(function (d) {
        var k = r + d;
        if (k < 0 || k >= n || self.merged[k]) return;
        self.runPack(k).then(function () { self.runsNear(k); }, function () {});
      });
    });
  };

  // a run's pack merged: where it is one or two steps from the chosen run and the reader is on the run
  // picker, the pictures near the current state again (prefetch lists the frames picking a run shows)
  Engine.prototype.runsNear = function (k) {
    if (this.current && Math.abs(k - this.run) <= 2 && this.picking()) this.prefetch(this.current);
  };

  // whether the run picker has the focus: only then are the pictures of other runs composited ahead
  // (while the reader moves another control, its own next pictures come first)
  Engine.prototype.picking = function () {
    return this.by >= 0 && this.controls[this.by].el.contains(document.activeElement);
  };

  // The state picking run r shows from the state last (pickRun's rule; nothing moves): the run's
  // defaults, keeping one control the reader had moved where the run frames it (not one whose options
  // the run changes); moved lists the [control, value] kept or, more than one, put back.
  Engine.prototype.runState = function (r, last) {
    var self = this, frames = this.data.frames, want = this.data.by.runs[r]["default"].split(",").map(Number);
    var moved = [];
    this.controls.forEach(function (c, i) {
      if (i === self.by || self.retargeted[i] || last[i] === want[i]) return;
      var s = want.slice(); s[i] = self.snap(i, last[i], r);
      if (frames[s.join(",")]) moved.push([i, s[i]]);
    });
    if (moved.length === 1) want[moved[0][0]] = moved[0][1];
    return { state: want, moved: moved };
  };

  // the value indices of a control the current run (or run r) frames (a slider's grid), or null: every value
  Engine.prototype.grid = function (i, r) {
    if (this.by < 0 || i === this.by) return null;
    var g = (this.data.by.runs[r === undefined ? this.run : r].grids || {})[i];
    return g || null;
  };

  // how many values a control offers in the current run
  Engine.prototype.count = function (i) {
    var c = this.controls[i];
    return c.labels ? c.labels.length : c.spec.count;
  };

  // the value d stops away from k (undefined: none)
  Engine.prototype.step = function (i, k, d) {
    var g = this.grid(i);
    if (!g) { k += d; return k >= 0 && k < this.count(i) ? k : undefined; }
    var at = g.indexOf(k);
    return at < 0 ? undefined : g[at + d];
  };

  // a slider's value between the run's (or run r's) stops goes to the next stop the way it moved (else the nearest)
  Engine.prototype.snap = function (i, k, r) {
    var g = this.grid(i, r);
    if (!g || g.indexOf(k) >= 0) return k;
    var from = this.current ? this.current[i] : this.defaults[i], best = g[0];
    g.forEach(function (v) { if (Math.abs(v - k) < Math.abs(best - k)) best = v; });
    if (best === from && k !== from) {
      var at = g.indexOf(from), next = g[at + (k > from ? 1 : -1)];
      if (next !== undefined) best = next;
    }
    return best;
  };

  // the page's controls as the run offers them: its options (range and readout words), switched off
  // where the run has no such choice
  Engine.prototype.setRun = function (r) {
    var self = this, run = this.data.by.runs[r];
    this.run = r;
    this.defaults = run["default"].split(",").map(Number);
    this.controls.forEach(function (c, i) {
      if (i === self.by) return;
      var target = c.el.querySelector(".noUi-target");
      if (self.retargeted[i] && target && target.noUiSlider) {
        var labels = (run.labels || {})[i] || c.spec.labels || null;
        c.labels = labels;
        target.noUiSlider.updateOptions({ range: { min: 0, max: Math.max(1, labels.length - 1) } }, false);
      }
      var switched = run.disabled || {};
      var off = (i in switched ? !!switched[i] : !!c.spec.disabled) || !!(c.labels && c.labels.length < 2);
      if (target) {
        if (off) target.setAttribute("disabled", ""); else target.removeAttribute("disabled");
        c.el.querySelectorAll(".noUi-handle").forEach(function (h) {
          if (off) h.setAttribute("aria-disabled", "true"); else h.removeAttribute("aria-disabled");
          h.setAttribute("tabindex", off ? "-1" : "0");
        });
      }
      c.el.classList.toggle("cm-run-off", off);
    });
  };

  // the readout of a control the run retargeted: the run's words for the handle's place
  Engine.prototype.relabel = function (c) {
    if (!c.labels) return;
    var target = c.el.querySelector(".noUi-target"), r = c.el.querySelector(".widget-readout");
    if (!target || !target.noUiSlider || !r) return;
    var k = Math.min(c.labels.length - 1, Math.max(0, Math.round(Number(target.noUiSlider.get()))));
    if (r.textContent !== c.labels[k]) r.textContent = c.labels[k];
  };

  Engine.prototype.check = function () {
    // the page must show the default the frames were computed from (else they are stale)
    var want = this.data.check.table, got = (this.table ? this.table.textContent : "").replace(/\s+/g, "");
    if (!this.table || got !== want) {
      throw new Error("stale frames: the page's table reads \"" + got.slice(0, 80) + "\", the frames' default \"" +
                      want.slice(0, 80) + "\"");
    }
    if (!this.data.check.picture || !this.img) return Promise.resolve();
    if (!(window.crypto && crypto.subtle)) return Promise.resolve();  // not a secure context: table only
    var want_picture = this.data.check.picture;
    return fetch(this.original).then(function (r) { return r.arrayBuffer(); })
      .then(function (buf) { return crypto.subtle.digest("SHA-256", buf); })
      .then(function (digest) {
        var hex = Array.prototype.map.call(new Uint8Array(digest), function (b) {
          return ("0" + b.toString(16)).slice(-2);
        }).join("");
        if (hex !== want_picture) throw new Error("stale frames: the page's picture is not the frames' default");
      }, function () { /* a blob the page cannot read back (file://): the table decided */ });
  };

  // -- the controls, as the page shows them ----------------------------------------------------
  Engine.prototype.read = function (c) {
    var kind = c.spec.kind, el = c.el;
    if (kind === "slider" || kind === "selection") {
      var target = el.querySelector(".noUi-target");
      var v = Number(target && target.noUiSlider ? target.noUiSlider.get() : NaN);
      if (kind === "selection") return Math.round(v);
      var values = c.spec.values, best = 0;
      for (var k = 1; k < values.length; k++) if (Math.abs(values[k] - v) < Math.abs(values[best] - v)) best = k;
      return best;
    }
    if (kind === "checkbox") return el.querySelector("input").checked ? 1 : 0;
    if (kind === "toggle") return el.classList.contains("mod-active") ? 1 : 0;
    if (kind === "select") return el.querySelector("select").selectedIndex;
    return 0;
  };

  Engine.prototype.write = function (c, k) {
    var kind = c.spec.kind, el = c.el;
    if (this.read(c) === k && kind !== "slider") return;
    if (kind === "slider" || kind === "selection") {
      var target = el.querySelector(".noUi-target");
      var value = kind === "slider" ? c.spec.values[k] : k;
      if (target && target.noUiSlider && Number(target.noUiSlider.get()) !== value) target.noUiSlider.set(value);
    } else if (kind === "checkbox") {
      el.querySelector("input").click();
    } else if (kind === "toggle") {
      el.click();
    } else if (kind === "select") {
      var select = el.querySelector("select");
      select.selectedIndex = k;
      select.dispatchEvent(new Event("change", { bubbles: true }));
    }
  };

  // each control's value index; -1 for a detached control the reader has not moved since
  Engine.prototype.state = function () {
    var self = this;
    return this.controls.map(function (c, i) {
      var k = self.read(c);
      if (self.by >= 0 && i !== self.by) {
        if (c.labels) k = Math.min(k, c.labels.length - 1);
        return self.snap(i, k);
      }
      return c.detached && k === c.detachedAt ? -1 : k;
    });
  };

  // A control another one retargeted (its options are not the page's): its readout says what the
  // explorer shows, its handle stays, and it is dimmed until a frame puts it back.
  // Its handle goes where the readout says when the page's slider has that value (else it stays, dimmed).
  Engine.prototype.detach = function (c, words) {
    if (!c.detached) {
      c.detached = true;
      c.el.classList.add("cm-detached");
    }
    var target = c.el.querySelector(".noUi-target"), n = Number(String(words).replace(/[,\s\u202f]/g, ""));
    if (words !== undefined && target && target.noUiSlider) {
      if (c.spec.kind === "slider" && isFinite(n)) {
        var values = c.spec.values;
        for (var k = 0; k < values.length; k++) {
          if (Math.abs(values[k] - n) <= 1e-9 * Math.max(1, Math.abs(n))) { target.noUiSlider.set(values[k]); break; }
        }
      } else if (c.spec.kind === "selection" && c.spec.labels && c.spec.labels.indexOf(String(words)) >= 0) {
        target.noUiSlider.set(c.spec.labels.indexOf(String(words)));
      }
    }
    c.detachedAt = this.read(c);
    var readout = c.el.querySelector(".widget-readout");
    if (readout && words !== undefined) readout.textContent = words;
    c.el.querySelectorAll(".noUi-handle").forEach(function (h) { if (words !== undefined) h.setAttribute("aria-valuetext", words); });
  };

  Engine.prototype.attach = function (c, k) {
    c.detached = false;
    c.el.classList.remove("cm-detached");
    var target = c.el.querySelector(".noUi-target");
    if (target && target.noUiSlider) {  // set even if unchanged: the widget writes its readout back
      target.noUiSlider.set(c.spec.kind === "slider" ? c.spec.values[k] : k);
    } else {
      this.write(c, k);
    }
  };

  // -- packs: the pictures of one control's frames, fetched once --------------------------------------
  Engine.prototype.pack = function (name) {
    var self = this, src = this.base + "pack-" + name + ".js";
    if (!this.packs[name]) {
      this.packs[name] = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = src;
        s.onload = function () {
          var got = (packed[self.key] || {})[name];
          if (got) resolve(got); else reject(new Error("no pictures in " + src));
        };
        s.onerror = function () { reject(new Error("could not load " + src)); };
        document.head.appendChild(s);
      });
      this.packs[name].catch(function (err) {
        console.error("static explorer " + self.key + ": no picture at " + src + " (" + err.message + ")");
      });
    }
    return this.packs[name];
  };

  // Promise of the URL a picture file is shown from (its data: URL in its pack, or the file itself)
  Engine.prototype.url = function (file) {
    var packs = this.data.packs, self = this;
    if (!packs) return Promise.resolve(this.base + file);  // frames written before packs
    if (!packs[file]) return Promise.reject(new Error("no pack holds " + file));
    return this.pack(packs[file]).then(function (urls) {
      if (!urls[file]) throw new Error("pack " + packs[file] + " of " + self.key + " lacks " + file);
      return urls[file];
    });
  };

  // whether a picture is at hand without a request
  Engine.prototype.here = function (file) {
    var packs = this.data.packs;
    return !packs || !!((packed[this.key] || {})[packs[file]]);
  };

  // the packs of the frames a control reaches in a step or two from the current state, fetched ahead
  Engine.prototype.warm = function (i) {
    var c = this.controls[i], state = (this.current || this.defaults), self = this;
    if (i === this.by && this.current) this.prefetch(this.current);  // the neighbouring runs' pictures
    if (!c || !this.data.packs || this.by >= 0) return;
    [1, -1, 2, -2].forEach(function (d) {
      var k = state[i] + d;
      if (k < 0 || k >= c.spec.count) return;
      var s = state.slice(); s[i] = k;
      var f = self.data.frames[s.join(",")] || self.data.frames[self.defaults.map(function (v, j) { return j === i ? k : v; }).join(",")];
      if (f && f[1] && self.data.packs[f[1]]) self.pack(self.data.packs[f[1]]).catch(function () {});
    });
  };

  // -- pictures: fetched ahead, nearest the current state first (only those whose pack is here) --------
  Engine.prototype.prefetch = function (state) {
    var self = this, frames = this.data.frames, near = [], seen = {}, picking = this.picking();
    for (var d = 1; d <= 4; d++) {  // one step of every control first, then two...
      this.controls.forEach(function (c, i) {
        [self.step(i, state[i], d), self.step(i, state[i], -d)].forEach(function (k) {
          if (k === undefined || k < 0 || k >= self.count(i)) return;
          var f, s = state.slice();
          if (i === self.by) {  // another run: the frame picking it shows (its pack merged, the picker focused)
            if (picking && self.ready[k]) f = frames[self.runState(k, state).state.join(",")];
          } else {
            s[i] = k;
            f = frames[s.join(",")] || frames[self.defaults.map(function (v, j) { return j === i ? k : v; }).join(",")];
          }
          if (f && f[1] && !seen[f[1]] && self.here(f[1])) { seen[f[1]] = true; near.push(f[1]); }
        });
      });
    }
    this.queue = near.concat(this.queue);
    this.pump();
    this.prepare(near);
  };

  Engine.prototype.pump = function () {
    while (this.loading < 6 && this.queue.length) {
      var file = this.queue.shift();
      if (!this.images[file]) this.picture(file);
    }
  };

  // Promise of the overlay (or whole picture) in a file, loaded
  Engine.prototype.picture = function (file) {
    var hit = this.images[file], self = this;
    if (hit) return hit;
    this.loading++;
    var done = function () { self.loading--; self.pump(); };
    hit = this.images[file] = this.url(file).then(function (url) {
      var im = new Image();
      im.src = url;
      return decoded(im);
    });
    hit.then(done, function () { done(); if (self.images[file] === hit) delete self.images[file]; });
    return hit;
  };

  function decoded(im) {
    if (im.decode) return im.decode().then(function () { return im; });
    return new Promise(function (resolve, reject) {
      if (im.complete) { if (im.naturalWidth) resolve(im); else reject(new Error("no picture")); return; }
      im.addEventListener("load", function () { resolve(im); });
      im.addEventListener("error", function () { reject(new Error("no picture")); });
    });
  }

  // -- a frame composited at its natural size: the default picture, the overlay drawn over it ------
  var KEEP = 48;  // whole frames kept per explorer (object URLs), the least recently shown go first

  Engine.prototype.compose = function (file) {
    var hit = this.composed[file], self = this;
    if (hit) return hit;
    if (this.layers) return Promise.reject(new Error("no canvas"));
    if (!this.under) {
      var base = new Image();
      base.src = this.original;
      this.under = decoded(base);
    }
    var made = Promise.all([this.under, this.picture(file)]).then(function (ims) {
      var base = ims[0], canvas = document.createElement("canvas");
      canvas.width = base.naturalWidth;
      canvas.height = base.naturalHeight;
      var ctx = canvas.getContext("2d");
      ctx.drawImage(base, 0, 0);
      ctx.drawImage(ims[1], 0, 0);  // opaque where the frame differs, transparent elsewhere: exact
      return new Promise(function (resolve, reject) {
        try {
          canvas.toBlob(function (blob) {
            if (blob) resolve(URL.createObjectURL(blob)); else reject(new Error("no blob"));
          }, "image/png");
        } catch (e) {  // a canvas the page may not read back (a page opened from file://): for good
          self.layers = true;
          reject(e);
        }
      });
    }).then(function (url) {
      // loaded and decoded once here, and held, so showing it later is immediate
      var whole = new Image();
      whole.src = url;
      self.wholes[file] = whole;
      return decoded(whole).then(function () { return url; }, function () { return url; });
    });
    this.composed[file] = made;
    this.recent.push(file);
    made.catch(function () {
      if (self.composed[file] === made) {
        delete self.composed[file];
        self.recent.splice(self.recent.indexOf(file), 1);
      }
    });
    this.forget();
    return made;
  };

  Engine.prototype.touch = function (file) {
    var i = this.recent.indexOf(file);
    if (i >= 0) { this.recent.splice(i, 1); this.recent.push(file); }
  };

  Engine.prototype.forget = function () {
    while (this.recent.length > KEEP) {
      var file = this.recent.shift(), made = this.composed[file];
      delete this.composed[file];
      delete this.wholes[file];
      made.then(function (url) { URL.revokeObjectURL(url); }, function () {});
    }
  };

  // composite the frames around the state, one after another, before the reader asks for them
  Engine.prototype.prepare = function (files) {
    var self = this;
    this.ahead = files.slice(0, KEEP / 2);
    if (this.preparing) return;
    this.preparing = true;
    var next = function () {
      var file = self.ahead.shift();
      if (file === undefined || self.layers) { self.preparing = false; return; }
      if (self.composed[file] || file.indexOf("full-") === 0) { next(); return; }
      self.compose(file).then(next, next);
    };
    next();
  };

  // a table's HTML from its token ids (a table listed as [-1, position, id, ...] differs from the first there)
  Engine.prototype.tableHTML = function (n) {
    var ids = this.data.tables[n], tokens = this.data.tokens;
    if (ids.length && ids[0] === -1) {
      var whole = this.data.tables[0].slice();
      for (var i = 1; i < ids.length; i += 2) whole[ids[i]] = ids[i + 1];
      ids = whole;
    }
    return ids.map(function (t) { return tokens[t]; }).join("");
  };

  // -- showing a frame ---------------------------------------------------------------------------
  Engine.prototype.show = function (name, entry) {
    var data = this.data, img = this.img, self = this;
    if (this.table) {
      this.table.innerHTML = this.tableHTML(entry[0]);
    }
    var done = Promise.resolve(), asked = ++this.shown;
    if (img) {
      var file = entry[1];
      img.setAttribute("data-cm-picture", file || "");
      var put = function (url, under) {
        if (asked !== self.shown) return;  // a later move asked for another picture meanwhile
        img.style.backgroundImage = under ? 'url("' + under + '")' : "";
        if (under) self.fit();
        if (img.src !== url) img.src = url;
        return img.decode ? img.decode().catch(function () {}) : undefined;
      };
      if (!file) {
        done = Promise.resolve(put(this.original));
      } else if (file.indexOf("full-") === 0) {
        done = this.url(file).then(function (url) { return put(url); }, function () { return put(self.base + file); });
      } else {
        this.touch(file);
        done = this.compose(file).then(function (url) { return put(url); }, function () {
          // not composited (the overlay did not load: its pack or the image reports it; or a canvas the
          // page may not read back): the overlay over the default picture, as CSS layers
          return self.url(file).then(function (url) { return put(url, self.original); },
                                     function () { return put(self.base + file, self.original); });
        });
      }
    }
    var words = this.controls.map(function (c) {
      var r = c.el.querySelector(".widget-readout");
      return c.spec.label + " " + (r ? text(r) : (self.read(c) ? "on" : "off"));
    }).filter(function (w, i) { return self.read(self.controls[i]) !== self.defaults[i]; });
    window.__cmFramesAlt(this.root, words.length ? "picture at " + words.join(", ") : "picture at the default values");
    window.__cmFramesLabel(this.root, false);
    this.controls.forEach(function (c) {
      if (c.spec.kind === "toggle") c.el.setAttribute("aria-pressed", c.el.classList.contains("mod-active") ? "true" : "false");
    });
    this.root.setAttribute("data-cm-frame", name);
    return done.then(function () {
      if (asked === self.shown) self.root.setAttribute("data-cm-shown-at", String(performance.now()));
    });
  };

  // (only where a frame cannot be composited) the default picture under the overlay, placed as the
  // image itself is (object-fit, object-position)
  Engine.prototype.fit = function () {
    var img = this.img, cs = getComputedStyle(img), fit = cs.objectFit;
    if (fit === "scale-down") {
      fit = img.naturalWidth > img.clientWidth || img.naturalHeight > img.clientHeight ? "contain" : "none";
    }
    img.style.backgroundSize = { contain: "contain", cover: "cover", none: "auto" }[fit] || "100% 100%";
    img.style.backgroundPosition = cs.objectPosition || "50% 50%";
    img.style.backgroundRepeat = "no-repeat";
  };

  Engine.prototype.say = function (labels) {
    if (!this.status) {
      var s = document.createElement("p");
      s.className = "cm-frames-status";
      s.setAttribute("role", "status");
      s.setAttribute("aria-live", "polite");
      // under the explorer's heading, across its whole width
      var row = this.controls[0].el;
      while (row.parentElement && row.parentElement !== this.root) row = row.parentElement;
      this.root.insertBefore(s, row);
      this.status = s;
    }
    this.status.textContent = labels.length
      ? "Back to " + (labels.length > 1 ? "their defaults: " : "its default: ") + labels.join("; ") + "." + COMBINED
      : "";
    this.status.hidden = !labels.length;
  };

  Engine.prototype.flash = function (c) {
    c.el.classList.remove("cm-reset");
    void c.el.offsetWidth;  // restart the animation
    c.el.classList.add("cm-reset");
  };

  // After any move: the frame for what the controls now say, or (not computed) the moved control's
  // frame with the others set back to their defaults.
  Engine.prototype.sync = function () {
    this.pending = false;
    if (this.applying) return;
    var self = this;
    if (this.by >= 0) {  // the chosen run's frames first (its pack, one request)
      var r = this.read(this.controls[this.by]);
      if (!this.ready[r]) {
        this.runPack(r).then(function () { self.sync(); },
                             function (err) { console.error("static explorer " + self.key + ": " + err.message); });
        return;
      }
      if (r !== this.run) return this.pickRun(r);
    }
    var state = this.state(), name = state.join(","), frames = this.data.frames, last = this.current;
    if (name === last.join(",")) {
      if (this.by >= 0) this.apply(frames[name], name);  // a slider let go between stops goes back to its stop
      return;
    }
    var moved = -1;
    for (var i = 0; i < state.length; i++) if (state[i] !== last[i]) { moved = i; }
    var entry = frames[name], reset = [];
    if (!entry) {
      var want = this.defaults.slice();
      if (moved >= 0) want[moved] = state[moved];
      name = want.join(",");
      entry = frames[name];
      if (!entry) {
        console.error("static explorer " + this.key + ": no frame for state " + name);
        return;
      }
      var self = this;
      this.controls.forEach(function (c, j) {
        if (j !== moved && state[j] !== -1 && state[j] !== want[j]) { reset.push(c.spec.label); self.flash(c); }
      });
    }
    this.apply(entry, name);
    var target = this.current;
    this.show(name, entry);
    // the note stays while the reader moves the control that caused it, and goes at the defaults
    if (reset.length || target.join(",") === this.defaults.join(",")) this.say(reset);
    this.prefetch(target);
  };

  // A run picked: its defaults, keeping one control the reader had moved where the run frames it (the
  // controls whose options the run changes go to the run's own values); more than one go back, and say so.
  Engine.prototype.pickRun = function (r) {
    var self = this, frames = this.data.frames, pick = this.runState(r, this.current), want = pick.state;
    this.setRun(r);
    var reset = [];
    if (pick.moved.length > 1) {
      pick.moved.forEach(function (m) { reset.push(self.controls[m[0]].spec.label); self.flash(self.controls[m[0]]); });
    }
    var name = want.join(","), entry = frames[name];
    if (!entry) { console.error("static explorer " + this.key + ": no frame for state " + name); return; }
    this.apply(entry, name);
    var shown = this.show(name, entry);
    this.say(reset);
    // the pictures around the run's state once its own is on screen (a new run's are all new: fetched
    // and composited at once, they slowed its first picture)
    shown.then(function () {
      if (self.run !== r) return;
      self.queue = [];  // the last run's pictures not yet fetched: none of them is near any more
      self.prefetch(self.current);
      self.runsAhead();
    });
  };

  // Put the controls where the frame says (detached ones show the frame's readout instead).
  Engine.prototype.apply = function (entry, name) {
    var target = (entry[2] || name).split(",").map(Number), readouts = entry[3] || {};
    this.applying = true;
    try {
      for (var j = 0; j < this.controls.length; j++) {
        var c = this.controls[j];
        if (target[j] === -1) this.detach(c, readouts[j]);
        else if (c.detached) this.attach(c, target[j]);
        else if (this.by >= 0 && c.spec.kind === "slider") this.attach(c, target[j]);  // back to its stop
        else this.write(c, target[j]);
        this.relabel(c);
      }
    } finally {
      this.applying = false;
    }
    this.current = target;
  };

  Engine.prototype.schedule = function () {
    if (this.applying || this.pending) return;
    this.pending = true;
    var self = this;
    Promise.resolve().then(function () { self.sync(); });
  };

  Engine.prototype.listen = function () {
    var self = this, poke = function () { self.schedule(); };
    this.controls.forEach(function (c, i) {
      var warm = function () { self.warm(i); };
      c.el.addEventListener("focusin", warm);
      c.el.addEventListener("pointerdown", warm);
      if (c.el.contains(document.activeElement)) warm();  // the touch that loaded the frames
      var target = c.el.querySelector(".noUi-target");
      if (target && target.noUiSlider) {
        target.noUiSlider.on("update.cmframes", function () { self.relabel(c); poke(); });
      }
      c.el.addEventListener("change", poke);
      c.el.addEventListener("click", poke);
      c.el.addEventListener("keyup", poke);
    });
    this.buttons.forEach(function (b) {
      if (!b.el) return;
      b.el.addEventListener("click", function () {
        var entry = self.data.frames[b.spec.frame];
        if (!entry) return;
        self.apply(entry, b.spec.frame);
        self.show(b.spec.frame, entry);
        self.say([]);
        self.prefetch(self.current);
      });
    });
  };

  window.__cmFramesStart = function (root, key, base, data) {
    var engine = new Engine(root, key, base, data);
    return engine.check().then(function () {
      if (engine.by < 0) return null;
      return engine.runPack(engine.run);
    }).then(function () {
      root.__cmEngine = engine;
      engine.current = engine.defaults.slice();
      root.setAttribute("data-cm-frame", data["default"]);
      engine.listen();
      root.setAttribute("data-cm-frames", "ready");
      engine.prefetch(engine.defaults);
      engine.sync();  // a control moved while the frames were loading
      engine.runsAhead();  // the runs next to the chosen one (the reader has touched the explorer)
    });
  };
})();
