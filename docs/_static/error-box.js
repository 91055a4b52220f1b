// The error box: paste an autograd error (or a whole traceback) and open its section
// of the error reference. The patterns come from explain()'s own table
// (error-patterns.js, generated at build time); the box's words come from the page,
// so that each edition shows them in its language, and the answer is the matched
// section's own first paragraph and fix, as the reader's edition words them.
(function () {
  "use strict";

  // The slug of the first pattern that the message matches, as explain() does.
  function slugOf(message) {
    for (const row of window.inplaceErrorPatterns || []) {
      if (new RegExp(row.pattern).test(message)) return row.slug;
    }
    return null;
  }

  // The section of the error reference with this slug, on this page.
  function sectionOf(slug) {
    const target = document.getElementById("error-" + slug);
    if (!target) return null;
    return target.tagName === "SECTION" ? target : target.closest("section");
  }

  // The section's first paragraph and its fix (the paragraph that opens with <strong>).
  function summaryOf(section, href) {
    const parts = [];
    const heading = section.querySelector("h1, h2, h3");
    const title = document.createElement("p");
    const link = document.createElement("a");
    link.href = href;
    link.className = "error-box-section";
    link.textContent = heading ? heading.textContent.replace(/[#¶]\s*$/, "").trim() : href;
    title.appendChild(link);
    parts.push(title);
    const paragraphs = Array.from(section.children).filter((e) => e.tagName === "P");
    if (paragraphs.length) parts.push(ended(paragraphs[0].cloneNode(true)));
    const fix = paragraphs.find((p) => p.firstChild && p.firstChild.nodeName === "STRONG");
    if (fix && fix !== paragraphs[0]) parts.push(ended(fix.cloneNode(true)));
    return parts;
  }

  // A paragraph that led into an example ends with a colon on the page; here it ends.
  function ended(paragraph) {
    const last = paragraph.lastChild;
    if (last && last.nodeType === Node.TEXT_NODE) {
      last.textContent = last.textContent.replace(/:\s*$/, ".").replace(/：\s*$/, "。");
    }
    return paragraph;
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
    input.rows = sectionOf("leaf") ? 4 : 2; // a short form where no section is on the page
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
      const slug = slugOf(input.value);
      const section = slug && sectionOf(slug);
      const href = page + "#error-" + slug;
      if (slug && section) {
        answer.dataset.slug = slug;
        answer.append(...summaryOf(section, href));
      } else if (slug) {
        window.location.href = href; // the landing page: open the section on its page
      } else {
        answer.dataset.slug = "";
        answer.appendChild(none.cloneNode(true));
      }
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll(".error-box").forEach(setUp);
  });
})();
