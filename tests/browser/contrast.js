// Colour contrast of every text on the page, judged by axe-core's color-contrast rule, in one
// colour mode ("light" or "dark"), fast enough to run on every page (see browsing.run_contrast).
//
// Why not axe's rule as is: it costs 3-8 ms per text element (for each one it rebuilds the
// stacking contexts of all its ancestors and parses their colours), and chapter 1 has 5,500 text
// elements (3,400 of them syntax-highlighting spans in code cells): 16-50 s a mode, with load.
// What is left is mostly fixed: axe builds a layout grid of the whole page once per run (about
// 40% of the time here), so the two modes cost two runs whatever the number of groups.
//
// What this does instead: the contrast axe computes for a text depends on the text's own colour,
// size, weight, shadow and stroke, and on what paints beneath it: the backgrounds, opacity,
// blending, filters, positioning and stacking of its ancestors (and of their ::before/::after).
// Texts that agree on all of that get the same verdict, so they form one group, and axe judges
// one member of each group (a visible one first). A group whose member axe skipped (hidden,
// clipped, off the page) is judged again on all its members. Any text whose ancestors differ in
// any of those properties is its own group, so nothing a reader sees goes unjudged. What the key
// cannot see is a text drawn over the box of an element that is not its ancestor (a positioned
// sibling): AXE_CONTRAST=1 runs the rule on every text and fails on any text the groups missed.
//
// Before judging, content a reader can open is opened: every <details> (hidden code cells,
// dropdowns) and the header's dropdown menus. {action: 'restore'} puts the page back as it was.
(arg) => {
  const { mode, action } = arg;
  const root = document.documentElement;
  const MARK = 'data-cc-judge';

  if (action === 'restore') {
    const saved = window.__ccSaved;
    if (!saved) return null;
    saved.details.forEach(d => { d.open = false; });
    saved.menus.forEach(m => { m.classList.remove('show'); m.style.position = ''; });
    for (const [k, v] of Object.entries(saved.dataset)) {
      if (v === undefined) delete root.dataset[k]; else root.dataset[k] = v;
    }
    document.querySelectorAll(`[${MARK}]`).forEach(e => e.removeAttribute(MARK));
    delete window.__ccSaved;
    return null;
  }

  if (action === 'cross-check') {
    // axe's rule as is, on every element, in the state the last grouped run judged: each text it
    // fails must belong to a group the grouped run failed (AXE_CONTRAST=1, `make a11y-contrast`).
    const { groupOf, failing } = window.__ccLast;
    axe.configure({ rules: [{ id: 'color-contrast', selector: '*' }] });
    return axe.run(document, { runOnly: ['color-contrast'], preload: false, elementRef: true,
                               resultTypes: ['violations'] }).then(res => {
      const nodes = res.violations.flatMap(r => r.nodes);
      const missed = nodes.filter(n => !(groupOf.get(n.element) || []).some(m => failing.has(m)));
      return { failing: nodes.length,
               missed: missed.map(n => `${n.target.join(' ')}: ${n.failureSummary || ''}`.slice(0, 240)) };
    });
  }

  if (!window.__ccSaved) {
    const details = [...document.querySelectorAll('details:not([open])')];
    details.forEach(d => { d.open = true; });
    const menus = [...document.querySelectorAll('.dropdown-menu:not(.show)')];
    // In the flow rather than over the page: an open menu would hide the sidebar texts beneath it.
    menus.forEach(m => { m.classList.add('show'); m.style.position = 'static'; });
    window.__ccSaved = { details, menus, dataset: { theme: root.dataset.theme, mode: root.dataset.mode } };
  }
  // pydata-sphinx-theme: data-mode is the reader's choice, data-theme what the CSS follows.
  root.dataset.mode = mode;
  root.dataset.theme = mode;

  // Opened cells fade in and the theme may ease its colours: judge the end state, not a frame of it.
  const settle = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return settle().then(() => {
    document.getAnimations().forEach(a => { try { a.finish(); } catch (e) { /* infinite: leave it */ } });
    return settle();
  }).then(async () => {
    const t0 = performance.now();
    // -- group the texts -------------------------------------------------------------------
    const intern = new Map();
    const chainOf = new Map();
    const id = s => { if (!intern.has(s)) intern.set(s, intern.size); return intern.get(s); };
    const paint = (el, pseudo) => {
      const s = getComputedStyle(el, pseudo);
      return [s.backgroundColor, s.backgroundImage, s.backgroundClip, s.opacity, s.mixBlendMode,
              s.filter, s.backdropFilter, s.position, s.zIndex, s.isolation, s.transform,
              s.clipPath, s.maskImage, s.display, s.visibility, s.contentVisibility].join('|');
    };
    const chain = el => {
      if (!el) return 0;
      let c = chainOf.get(el);
      if (c !== undefined) return c;
      let own = paint(el);
      for (const p of ['::before', '::after']) {
        const content = getComputedStyle(el, p).content;
        if (content && content !== 'none' && content !== 'normal') own += `${p}${paint(el, p)}`;
      }
      c = id(`${own}#${chain(el.parentElement)}`);
      chainOf.set(el, c);
      return c;
    };
    // Candidates: what axe's rule could judge. It skips (or passes as hidden) an element that
    // draws nothing (no box, display/visibility/opacity), and one whose text is only punctuation
    // or emoji (its hasRealTextChildren, with axe's own removeUnicode); everything else is kept.
    const FORM = 'input, select, textarea';
    const { removeUnicode, sanitize } = axe.commons.text;
    const hasText = el => sanitize(removeUnicode(el.textContent || '',
      { emoji: true, nonBmp: false, punctuations: true })) !== '';
    // Disabled controls (and the labels of disabled controls) are exempt, as in axe; texts
    // clipped away by an absolutely positioned ancestor with a `clip` (screen-reader-only copies:
    // MathJax's assistive MathML, the skip link) draw nothing.
    const clipped = new Map();
    const isClipped = el => {
      if (!el) return false;
      if (clipped.has(el)) return clipped.get(el);
      const s = getComputedStyle(el);
      const c = (s.clip !== 'auto' && /absolute|fixed/.test(s.position)) || isClipped(el.parentElement);
      clipped.set(el, c);
      return c;
    };
    const disabled = el => el.matches(':disabled') ||
      !!(el.closest('label') && el.closest('label').querySelector(':disabled'));
    const shown = el => el.getClientRects().length > 0 &&
      el.checkVisibility({ opacityProperty: true, visibilityProperty: true }) &&
      !isClipped(el) && !disabled(el);
    const texts = [...document.body.querySelectorAll('*')].filter(el =>
      el.matches(FORM) || [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()));
    const candidates = texts.filter(el => shown(el) && (el.matches(FORM) || hasText(el)));
    const groups = new Map();
    for (const el of candidates) {
      const s = getComputedStyle(el);
      const text = (el.textContent || '').trim();
      const key = [s.color, s.fontSize, s.fontWeight, s.textShadow, s.webkitTextStrokeWidth,
                   s.webkitTextStrokeColor, s.webkitTextFillColor, s.opacity,
                   el.matches(FORM) ? `${el.tagName}/${el.type}/${el.disabled}` : '',
                   // axe's verdict also depends on these two properties of the text itself
                   text.length === 1, /\p{Extended_Pictographic}/u.test(text),
                   chain(el)].join('|');
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(el);
    }
    const groupOf = new Map();
    const first = [];
    for (const members of groups.values()) {
      members.forEach(m => groupOf.set(m, members));
      first.push(members[0]);
    }
    const tGroup = performance.now() - t0;

    // -- judge one member of each group, then every member of a group axe skipped ------------
    axe.configure({ rules: [{ id: 'color-contrast', selector: `[${MARK}]` }] });
    const judge = async els => {
      document.querySelectorAll(`[${MARK}]`).forEach(e => e.removeAttribute(MARK));
      els.forEach(e => e.setAttribute(MARK, ''));
      return axe.run(document, { runOnly: ['color-contrast'], preload: false, elementRef: true });
    };
    const verdicts = { violations: [], incomplete: 0, passes: 0, undecided: [] };
    const judged = new Set();
    const collect = res => {
      for (const kind of ['violations', 'incomplete', 'passes']) {
        for (const rule of res[kind]) {
          for (const n of rule.nodes) {
            judged.add(n.element);
            if (kind === 'violations') {
              verdicts.violations.push({
                target: n.target.join(' ').replaceAll(`[${MARK}=""]`, ''), html: n.html.slice(0, 160),
                summary: (n.any[0] && n.any[0].message) || n.failureSummary || '',
                group: groupOf.get(n.element) ? groupOf.get(n.element).length : 1, element: n.element,
              });
            } else {
              verdicts[kind] += 1;
              if (kind === 'incomplete') {
                const why = (n.any[0] && n.any[0].data && n.any[0].data.messageKey) || 'unknown';
                const where = n.target.join(' ').replaceAll(`[${MARK}=""]`, '').slice(-60);
                if (why === 'equalRatio') {
                  // axe leaves text in its own background's colour undecided (it may be hidden on
                  // purpose); on a book page it is text a reader cannot see: a violation
                  verdicts[kind] -= 1;
                  verdicts.violations.push({
                    target: n.target.join(' ').replaceAll(`[${MARK}=""]`, ''), html: n.html.slice(0, 160),
                    summary: 'text drawn in the colour of its background (contrast 1:1)',
                    group: groupOf.get(n.element) ? groupOf.get(n.element).length : 1, element: n.element,
                  });
                } else {
                  verdicts.undecided.push(`${why}: ${where}`);
                }
              }
            }
          }
        }
      }
    };
    const t1 = performance.now();
    collect(await judge(first));
    const tRound1 = performance.now() - t1;
    const skipped = first.filter(e => !judged.has(e));
    const again = skipped.flatMap(e => groupOf.get(e).slice(1));
    if (again.length) collect(await judge(again));
    document.querySelectorAll(`[${MARK}]`).forEach(e => e.removeAttribute(MARK));
    window.__ccLast = { groupOf, failing: new Set(verdicts.violations.map(v => v.element)) };
    verdicts.violations.forEach(v => { delete v.element; });
    return {
      mode, background: getComputedStyle(document.body).backgroundColor, texts: texts.length, groups: groups.size, judged: judged.size,
      secondRound: again.length,
      violations: verdicts.violations,
      incomplete: verdicts.incomplete, undecided: verdicts.undecided, passes: verdicts.passes,
      msGroup: Math.round(tGroup), msRound1: Math.round(tRound1), ms: Math.round(performance.now() - t0),
    };
  });
}
