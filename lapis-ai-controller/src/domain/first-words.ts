// The start of a prompt as a thread list shows it (threads.list and the
// SDK's threads.overview): one line, cut at a word, `…` when cut.

/** At most `maxChars` characters of `text` on one line, cut at a word boundary where there is one, `…` appended when cut. */
export function firstWords(text: string, maxChars: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  if (line.length <= maxChars) return line;
  const cut = line.slice(0, maxChars);
  // A cut right before a space keeps its last word whole; otherwise drop the broken word.
  const space = line[maxChars] === " " ? maxChars : cut.lastIndexOf(" ");
  return `${(space > 0 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
