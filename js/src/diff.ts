// A line diff of two texts for the card (an agent's edit before it is allowed): pure, capped.

/** One row of a diff: a line kept, removed or added, or a note of lines left out. */
export interface DiffRow {
  kind: "same" | "removed" | "added" | "skipped";
  text: string;
}

/** Lines of context kept around a change. */
const CONTEXT = 3;

/** The rows of a diff from `before` (null: a new file) to `after`: the lines common to both ends kept as context
 * (at most CONTEXT on each side), the middle as removed then added lines, at most `cap` rows in all (the rest
 * said in one "skipped" row). Linear in the texts' length: a trimmed middle, not a minimal diff. */
export function lineDiff(before: string | null, after: string, cap = 400): DiffRow[] {
  const old = before === null ? [] : splitLines(before);
  const now = splitLines(after);
  let start = 0;
  while (start < old.length && start < now.length && old[start] === now[start]) start++;
  let oldEnd = old.length;
  let nowEnd = now.length;
  while (oldEnd > start && nowEnd > start && old[oldEnd - 1] === now[nowEnd - 1]) {
    oldEnd--;
    nowEnd--;
  }
  const rows: DiffRow[] = [];
  if (start > CONTEXT) rows.push({ kind: "skipped", text: `${start - CONTEXT} unchanged lines` });
  for (const line of old.slice(Math.max(0, start - CONTEXT), start)) rows.push({ kind: "same", text: line });
  for (const line of old.slice(start, oldEnd)) rows.push({ kind: "removed", text: line });
  for (const line of now.slice(start, nowEnd)) rows.push({ kind: "added", text: line });
  const tail = now.slice(nowEnd);
  for (const line of tail.slice(0, CONTEXT)) rows.push({ kind: "same", text: line });
  if (tail.length > CONTEXT) rows.push({ kind: "skipped", text: `${tail.length - CONTEXT} unchanged lines` });
  if (rows.length <= cap) return rows;
  const kept = rows.slice(0, cap);
  const left = rows.slice(cap).filter((row) => row.kind !== "skipped").length;
  kept.push({ kind: "skipped", text: `${left} more lines not shown` });
  return kept;
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}
