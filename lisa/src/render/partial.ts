// Rules for text shown before the answer is final (streaming replies).
// Partial text is a preview the final validation has not seen, so it may
// show nothing that validation could take back or that acts on a member:
// - no links: Markdown links and images become their text, autolinks, bare
//   URLs, e-mail addresses and domain-like words (which clients linkify)
//   are left out, reference definitions dropped;
// - no mentions or pills: Matrix user ids, room aliases and `@room` are left
//   out (the message's `m.mentions` never goes beyond the final reply's);
// - no markup that could hide such things: raw HTML tags are left out;
// - only whole words: the last word is held back until a space follows it,
//   and an unclosed `[`, `<` or `(` link start at the end is held back, so a
//   link or mention is never shown half-typed.
// The final answer replaces all of it with the validated, rendered reply.

const LINK = /!?\[([^\]\n]*)\]\([^)\n]*\)/g;
const REF_LINK = /!?\[([^\]\n]*)\]\[[^\]\n]*\]/g;
const REF_DEFINITION = /^[ \t]{0,3}\[[^\]\n]+\]:[^\n]*$/gm;
const AUTOLINK = /<[a-z][a-z0-9+.-]*:[^>\s]*>/gi;
const TAG = /<\/?[a-z][^<>]*>/gi;
const URL = /\b(?:[a-z][a-z0-9+.-]*:\/\/|www\.|mailto:)\S*/gi;
const EMAIL = /\S+@\S+\.\S+/g;
const MATRIX_ID = /[@#!+][^\s:]*:[^\s]+/g;
const ROOM_MENTION = /@room\b/gi;
// How far back an unclosed `[` or `<` is taken for a link or tag still being written.
const HOLD_BACK_CHARACTERS = 300;
const DOMAIN = /\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}\b(?:\/\S*)?/gi;

/** Cuts a trailing construct that is still being written: an open link, tag or a word without a space after it. */
function holdBackTail(text: string): string {
  let out = text;
  // An unclosed `[`, or a `<` that may open a tag or autolink, near the end: a link, image or tag may be starting.
  // Further back it is prose ("x < 5"); whatever it holds is still filtered below.
  const near = Math.max(0, out.length - HOLD_BACK_CHARACTERS);
  const square = out.lastIndexOf("[");
  if (square >= near && !out.slice(square).includes("]")) out = out.slice(0, square);
  const angle = out.lastIndexOf("<");
  if (angle >= near && /^<(?:[A-Za-z/!]|$)/.test(out.slice(angle)) && !out.slice(angle).includes(">")) out = out.slice(0, angle);
  // `[text](` with its target still arriving.
  const open = /!?\[[^\]\n]*\]\([^)\n]*$/.exec(out);
  if (open !== null) out = out.slice(0, open.index);
  // Only whole words: keep up to the last whitespace.
  if (!/\s$/.test(out)) {
    const space = Math.max(out.lastIndexOf(" "), out.lastIndexOf("\n"), out.lastIndexOf("\t"));
    out = space < 0 ? "" : out.slice(0, space + 1);
  }
  return out;
}

/** The safe preview of partial answer Markdown (see the rules above). */
export function partialPreview(markdown: string): string {
  let text = holdBackTail(markdown);
  text = text.replace(REF_DEFINITION, "");
  text = text.replace(LINK, "$1").replace(REF_LINK, "$1");
  text = text.replace(AUTOLINK, "").replace(TAG, "");
  text = text.replace(URL, "").replace(EMAIL, "").replace(MATRIX_ID, "").replace(ROOM_MENTION, "").replace(DOMAIN, "");
  // A bracket pair left by a link's removal must not become a link with later text.
  text = text.replace(/\[\]\([^)]*\)?/g, "");
  return text.replace(/[ \t]{2,}/g, " ").replace(/\n{3,}/g, "\n\n").trim();
}
