// The error box: paste an autograd error (or a whole traceback) and get its answer.
// The table comes from explain()'s own (error-patterns.js, generated at build time by
// docs/error_patterns.py, each text as this edition words it); answerOf() reads the
// message and assembles the answer's lines exactly as Explanation.lines() does in
// Python, so that the box and explain() say the same words (tests/test_explain_box.py
// runs answerOf() in node on every message of the data set and compares).
(function (root) {
  "use strict";

  // {name} in a template, replaced by values[name] (no other syntax), as fill() in Python.
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, (whole, name) =>
      Object.prototype.hasOwnProperty.call(values, name) ? values[name] : whole);
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

  // {slug, lines} for the message, or null when no section covers it.
  function answerOf(table, message) {
    const text = readMessage(table, message);
    for (const kind of table.kinds) {
      if (!kind.wordings.some((pattern) => new RegExp(pattern).test(text))) continue;
      let causes = kind.causes.filter((c) => !c.when || new RegExp(c.when).test(text));
      if (!causes.length) causes = kind.causes;
      if (new RegExp(table.library.when).test(text)) causes = [table.library].concat(causes);
      const details = filled(kind.details, text).concat(filled(table.notes, text)).join(" ");
      const lines = [fill(table.lines.title, { title: kind.title }), kind.why];
      if (details) lines.push(details);
      if (causes.length === 1) {
        const values = { says: causes[0].says, fix: causes[0].fix };
        lines.push(fill(table.lines.cause, values), fill(table.lines.fix, values));
      } else {
        lines.push(table.causesHeading);
        causes.forEach((c, n) => {
          lines.push(fill(table.lines.numbered, { n: String(n + 1), says: c.says, fix: c.fix }));
        });
      }
      lines.push(table.auditHint);
      return { slug: kind.slug, lines: lines };
    }
    return null;
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
      answer.dataset.slug = found.slug;
      found.lines.forEach((line, n) => {
        const paragraph = document.createElement("p");
        if (n === 0) {
          const link = document.createElement("a");
          link.href = page + "#error-" + found.slug;
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
