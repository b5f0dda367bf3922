// A deterministic, article-like HTML page of a given size: navigation,
// headings, paragraphs with inline markup and links, lists, tables, code
// blocks and a footer, as real pages mix them.
import { seededRandom } from "../../test/support/prng.ts";

const WORDS = (
  "the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were " +
  "her she there been one all we their has would when if so no will more out up into do any your what about them time " +
  "protocol server matrix message room history context model answer source page conversion markdown table section"
).split(" ");

function sentence(random: () => number): string {
  const count = 8 + Math.floor(random() * 14);
  const words = Array.from({ length: count }, () => WORDS[Math.floor(random() * WORDS.length)] ?? "word");
  const text = words.join(" ");
  return text.charAt(0).toUpperCase() + text.slice(1) + ".";
}

function paragraph(random: () => number, index: number): string {
  const parts = Array.from({ length: 3 + Math.floor(random() * 4) }, () => sentence(random));
  const link = `<a href="https://example.test/articles/${index}?ref=bench&amp;page=${index % 7}">related article ${index}</a>`;
  return `<p>${parts[0]} <strong>${parts[1]}</strong> ${link} <em>${parts.slice(2).join(" ")}</em></p>`;
}

function block(random: () => number, index: number): string {
  switch (index % 6) {
    case 0: return `<h2 id="s${index}">Section ${index}: ${sentence(random)}</h2>`;
    case 1: return `<ul>${Array.from({ length: 5 }, () => `<li>${sentence(random)}</li>`).join("")}</ul>`;
    case 2: {
      const rows = Array.from({ length: 4 }, (_, r) => `<tr><td>${r}</td><td>${sentence(random)}</td><td>${Math.floor(random() * 1000)}</td></tr>`);
      return `<table><thead><tr><th>#</th><th>Description</th><th>Value</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
    }
    case 3: return `<pre><code>const value${index} = compute(${index}, "${WORDS[index % WORDS.length]}");\nreturn value${index} * 2;</code></pre>`;
    default: return `<div class="content"><span class="meta">${index}</span>${paragraph(random, index)}</div>`;
  }
}

/** An HTML page of at most `bytes` UTF-8 bytes (whole blocks only, so a little less). */
export function articlePage(bytes: number, seed = 7): string {
  const random = seededRandom(seed);
  const head = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Benchmark article</title>` +
    `<style>body{font-family:sans-serif}</style><script>window.analytics=function(){};</script></head><body>` +
    `<nav><a href="/">Home</a> | <a href="/blog">Blog</a> | <a href="/about">About</a></nav><main><h1>Benchmark article</h1>`;
  const tail = `</main><footer><p>&copy; 2026 Example. <a href="/privacy">Privacy</a></p></footer></body></html>`;
  const parts = [head];
  let size = head.length + tail.length;
  for (let i = 0; ; i += 1) {
    const next = `${paragraph(random, i)}\n${block(random, i)}\n`;
    if (size + next.length > bytes) break;
    parts.push(next);
    size += next.length;
  }
  parts.push(tail);
  return parts.join("");
}
