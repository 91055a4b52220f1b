// The error box: paste an autograd error (or a whole traceback) and get its answer.
// The table comes from explain()'s own (error-patterns.js, generated at build time by
// docs/error_patterns.py, each text as this edition words it); answerOf() reads the
// message, finds its sections by their patterns and, for a paste cut or retyped, by
// their wordings' words (inplace_recipes._error_words, the same rules and literals),
// and assembles the answer's lines exactly as Explanation.lines() does in Python, so
// that the box and explain() say the same words (tests/test_explain_box.py runs
// answerOf() in node on every message of the data set, every wording's literal and
// its cuts and retypings, and compares).
(function (root) {
  "use strict";

  // {name} in a template, replaced by values[name] (no other syntax), as fill() in Python.
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, (whole, name) =>
      Object.prototype.hasOwnProperty.call(values, name) ? values[name] : whole);
  }

  // The message with a terminal's hard wrapping undone, as _error_words.unwrapped() gives
  // it. Lengths are counted in code points, as Python's len() counts them.
  function unwrapped(table, message) {
    const rows = message.split(/\r\n?|\n/);
    const lengths = rows.map((row) => Array.from(row).length);
    let width = 0;
    let count = 0;
    for (const n of lengths) {
      if (n > width) [width, count] = [n, 1];
      else if (n === width) count += 1;
    }
    if (width < table.words.wrapWidth) return message;
    const vocabulary = new Set(table.words.literals.flat().concat(table.words.small));
    for (const word of table.words.weightless) vocabulary.delete(word);
    // 2: a word split into two pieces neither of which is a word; 1: one is; 0: no such
    // split; -1: two words with no space between (an editor's break), as _split_word()
    const splitWord = (row, after) => {
      const left = /[A-Za-z]+$/.exec(row.slice(-40));
      const right = /^[A-Za-z]+/.exec(after.slice(0, 40));
      if (!left || !right) return 0;
      const a = left[0].toLowerCase();
      const b = right[0].toLowerCase();
      // a node's name goes on in lower case (TBack / ward); a new one starts upper (of / Sigmoid)
      const node = /^[a-z]/.test(right[0]) && /^[a-z]+backward$/.test(a + b);
      const words = (vocabulary.has(a) ? 1 : 0) + (vocabulary.has(b) ? 1 : 0);
      if (!(vocabulary.has(a + b) || node)) return words === 2 ? -1 : 0;
      return 2 - words;
    };
    const splits = [];
    for (let i = 1; i < rows.length; i++) {
      splits.push(lengths[i - 1] === width ? splitWord(rows[i - 1], rows[i]) : 0);
    }
    const every = count >= 2 && splits.includes(2) && !splits.includes(-1);
    const joined = [rows[0]];
    for (let i = 1; i < rows.length; i++) {
      if (splits[i - 1] > 0 || (every && lengths[i - 1] === width)) {
        joined[joined.length - 1] += rows[i];
      } else {
        joined.push(rows[i]);
      }
    }
    return joined.join("\n");
  }

  // The message in the form the table matches, as _error_reading.read() gives it.
  function readMessage(table, message) {
    for (const rewrite of table.reading) {
      message = message.replace(new RegExp(rewrite.pattern, rewrite.flags), rewrite.replacement);
    }
    return message.trim();
  }

  function filled(details, text) {
    const out = [];
    for (const detail of details) {
      const found = new RegExp(detail.pattern).exec(text);
      if (found) out.push(fill(detail.template, found.groups || {}));
    }
    return out;
  }

  // The words of a text, small words included, as _error_words._all_words() gives them.
  function allWords(table, text) {
    text = text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
    for (const rewrite of table.words.form) {
      text = text.replace(new RegExp(rewrite.pattern, rewrite.flags), rewrite.replacement);
    }
    return text.match(/[a-z]+|#/g) || [];
  }

  // [words, cut] of a read paste, as _error_words.pasted() gives them.
  function pasted(table, text) {
    const small = new Set(table.words.small);
    let found = allWords(table, text);
    let cut = /[A-Za-z0-9]$/.test(text) && found.length > 0;
    if (cut && table.words.small.some((word) => word.startsWith(found[found.length - 1]))) {
      found = found.slice(0, -1);
      cut = false;
    }
    return [found.filter((word) => !small.has(word)).slice(-table.words.maxWords), cut];
  }

  // Whether run is a run of literal (its last word, if cut, the start of one), as _occurs().
  function occurs(run, cut, literal) {
    const n = run.length;
    for (let start = 0; start + n <= literal.length; start++) {
      let same = true;
      for (let k = 0; k < n - 1 && same; k++) same = literal[start + k] === run[k];
      const last = literal[start + n - 1];
      if (same && (last === run[n - 1] || (cut && last.startsWith(run[n - 1])))) return true;
    }
    return false;
  }

  // Where each word is in the literals ([literal, position]), made once per table.
  const indexes = new WeakMap();
  function indexOf(table) {
    if (!indexes.has(table)) {
      const where = new Map();
      table.words.literals.forEach((literal, n) => literal.forEach((word, j) => {
        if (!where.has(word)) where.set(word, []);
        where.get(word).push([n, j]);
      }));
      indexes.set(table, where);
    }
    return indexes.get(table);
  }

  // [heaviest run, heaviest clean run] of each literal, as _error_words.heaviest_runs().
  function heaviestRuns(table, paste, cut) {
    const literals = table.words.literals;
    const weightless = new Set(table.words.weightless);
    const where = indexOf(table);
    const heaviest = literals.map(() => [0, 0]);
    let before = new Map();
    paste.forEach((word, i) => {
      const openEnd = cut && i === paste.length - 1;
      let at = where.get(word) || [];
      if (openEnd) {
        at = [];
        literals.forEach((literal, n) => literal.forEach((other, j) => {
          if (other.startsWith(word)) at.push([n, j]);
        }));
      }
      const now = new Map();
      for (const [n, j] of at) {
        const [length0, weight0] = before.get(n + ":" + (j - 1)) || [0, 0];
        const length = length0 + 1;
        const weight = weight0 + (weightless.has(word) ? 0 : 1);
        now.set(n + ":" + j, [length, weight]);
        const best = heaviest[n];
        const clean = j === literals[n].length - 1 || i === paste.length - 1;
        if (weight <= best[clean ? 1 : 0]) continue;
        const run = paste.slice(i - length + 1, i + 1);
        const opening = j - length + 1 === 0 && weight >= table.words.minOpening;
        const phrase = weight >= table.words.minPhrase &&
          !literals.some((other, m) => table.words.section[m] !== table.words.section[n] &&
            occurs(run, openEnd, other));
        if (opening || phrase) {
          best[0] = Math.max(best[0], weight);
          if (clean) best[1] = weight;
        }
      }
      before = now;
    });
    return heaviest;
  }

  // Each section's heaviest run ({kind, wording, weight, threads}), as _error_words.matches().
  function matches(table, runs, clean) {
    const perWording = [];
    runs.forEach((run, m) => {
      const w = table.words.wording[m];
      perWording[w] = Math.max(perWording[w] || 0, run[clean ? 1 : 0]);
    });
    const found = [];
    let n = 0;
    table.kinds.forEach((kind, index) => {
      // a wording the words reader does not read (read_by_words=False) has no literal: 0
      const mine = kind.wordings.map((_, w) => [perWording[n + w] || 0, w]);
      n += kind.wordings.length;
      const heaviest = Math.max(...mine.map(([weight]) => weight));
      if (!heaviest) return;
      const best = mine.filter(([weight]) => weight === heaviest).map(([, w]) => w);
      let wording = best[0];
      for (const w of best) if (kind.threads[w] > kind.threads[wording]) wording = w;
      const threads = best.reduce((sum, w) => sum + kind.threads[w], 0);
      found.push({ kind: kind, index: index, wording: wording, weight: heaviest, threads: threads });
    });
    return found;
  }

  function ranked(found) {
    return found.slice().sort((a, b) => b.threads - a.threads || a.index - b.index);
  }

  // The sections a read message may be, the most frequent first, as error_reference.sections().
  function sections(table, text) {
    const [paste, cut] = pasted(table, text);
    const runs = heaviestRuns(table, paste, cut);
    let found = matches(table, runs, false);
    let exact = null;
    table.kinds.some((kind, index) => {
      const w = kind.wordings.findIndex((pattern) => new RegExp(pattern).test(text));
      if (w >= 0) exact = { kind: kind, index: index, wording: w };
      return w >= 0;
    });
    if (exact) {
      const heavy = new Map(found.map((m) => [m.kind.slug, m]));
      const clean = new Map(matches(table, runs, true).map((m) => [m.kind.slug, m]));
      const own = heavy.get(exact.kind.slug) ||
        { kind: exact.kind, index: exact.index, wording: exact.wording, weight: 0,
          threads: exact.kind.threads[exact.wording] };
      found = [];
      for (const other of table.kinds) {
        if (other === exact.kind) continue;
        const run = heavy.get(other.slug);
        const cleanRun = clean.get(other.slug);
        if (run && run.weight >= own.weight + table.words.minPhrase) found.push(run);
        else if (cleanRun && cleanRun.weight > own.weight) found.push(cleanRun);
      }
      if (!found.length) {
        const ties = own.weight ? [...clean.values()].filter(
          (m) => m.kind !== exact.kind && m.weight === own.weight) : [];
        const mine = { kind: exact.kind, index: exact.index, wording: exact.wording,
          weight: own.weight, threads: own.threads };
        return ranked([mine].concat(ties));
      }
    }
    const heaviest = Math.max(0, ...found.map((m) => m.weight));
    return ranked(found.filter((m) => m.weight === heaviest));
  }

  function sectionLine(table, kind) {
    return fill(table.lines.section, { title: kind.title, url: table.errorsPage + "#error-" + kind.slug });
  }

  // {slug, lines, alternatives} for the message, or null when no section covers it;
  // slug is null where the paste fits several sections seen equally often.
  function answerOf(table, message) {
    const text = readMessage(table, unwrapped(table, message));
    const found = sections(table, text);
    if (!found.length) return null;
    const others = found.slice(1).map((m) => m.kind);
    if (found.length > 1 && found[0].threads === found[1].threads) {
      const all = found.map((m) => m.kind);
      return { slug: null, lines: [table.undecidedHeading].concat(
        all.map((kind) => sectionLine(table, kind))), alternatives: all.map((kind) => kind.slug) };
    }
    const kind = found[0].kind;
    let causes = kind.causes.filter((c) => !c.when || new RegExp(c.when).test(text));
    if (!causes.length) causes = kind.causes;
    const shown = causes.filter((c) => c.first && new RegExp(c.first).test(text));
    causes = shown.concat(causes.filter((c) => !shown.includes(c)));
    const library = new RegExp(table.library.when).test(text);
    if (library) causes = [table.library].concat(causes);
    const details = filled(kind.details, text).concat(filled(table.notes, text)).join(" ");
    const lines = [fill(table.lines.title, { title: kind.title })];
    if (others.length) {
      lines.push(table.alsoHeading);
      others.forEach((other) => lines.push(sectionLine(table, other)));
    }
    lines.push(kind.why);
    if (details) lines.push(details);
    if (causes.length === 1) {
      const values = { says: causes[0].says, fix: causes[0].fix };
      lines.push(fill(table.lines.cause, values), fill(table.lines.fix, values));
    } else {
      lines.push(shown.length || library ? table.shownHeading : table.causesHeading);
      causes.forEach((c, n) => {
        lines.push(fill(table.lines.numbered, { n: String(n + 1), says: c.says, fix: c.fix }));
      });
    }
    lines.push(table.auditHint);
    return { slug: kind.slug, lines: lines, alternatives: others.map((other) => other.slug) };
  }

  function setUp(box) {
    const strings = box.querySelector(".error-box-strings");
    const text = (name) => strings.querySelector(".error-box-" + name).textContent.trim();
    const none = strings.querySelector(".error-box-none p");
    const reference = none.querySelector("a");
    const page = reference.getAttribute("href").split("#")[0];

    const form = document.createElement("form");
    const label = document.createElement("label");
    const input = document.createElement("textarea");
    const button = document.createElement("button");
    const answer = document.createElement("div");
    input.id = "error-box-input-" + document.querySelectorAll(".error-box form").length;
    input.rows = document.getElementById("error-leaf") ? 4 : 2; // short beside no section
    input.spellcheck = false;
    label.htmlFor = input.id;
    label.textContent = text("label");
    button.type = "submit";
    button.textContent = text("submit");
    answer.className = "error-box-answer";
    answer.setAttribute("aria-live", "polite");
    form.append(label, input, button, answer);
    box.appendChild(form);

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      answer.replaceChildren();
      const found = answerOf(root.inplaceErrorPatterns, input.value);
      if (!found) {
        answer.dataset.slug = "";
        answer.appendChild(none.cloneNode(true));
        return;
      }
      answer.dataset.slug = found.slug || "";
      answer.dataset.alternatives = found.alternatives.join(" ");
      // the lines that name a section link to it: the title, then each alternative
      const links = new Map(found.slug ? [[0, found.slug]] : []);
      const first = found.slug ? 2 : 1;
      found.alternatives.forEach((slug, k) => links.set(first + k, slug));
      found.lines.forEach((line, n) => {
        const paragraph = document.createElement("p");
        if (links.has(n)) {
          const link = document.createElement("a");
          link.href = page + "#error-" + links.get(n);
          link.className = "error-box-section";
          link.textContent = line;
          paragraph.appendChild(link);
        } else {
          paragraph.textContent = line;
        }
        answer.appendChild(paragraph);
      });
    });
  }

  if (typeof module !== "undefined" && module.exports) {
    module.exports = { answerOf: answerOf, readMessage: readMessage, fill: fill };
  }
  if (typeof document !== "undefined") {
    document.addEventListener("DOMContentLoaded", () => {
      document.querySelectorAll(".error-box").forEach(setUp);
    });
  }
})(typeof window !== "undefined" ? window : globalThis);
