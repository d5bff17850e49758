/** Plain-text table printer for benchmark output. */

export type Cell = string | number | null | undefined;

export interface Column {
  title: string;
  /** Right-align (numbers). Default: left for the first column, right for the rest. */
  align?: 'left' | 'right';
}

/** Render rows under a header, columns padded to their widest cell; `null`/`undefined` print as "-". */
export function renderTable(columns: ReadonlyArray<Column | string>, rows: ReadonlyArray<ReadonlyArray<Cell>>): string {
  const cols: Column[] = columns.map((c) => (typeof c === 'string' ? { title: c } : c));
  const text = rows.map((r) => cols.map((_, i) => cellText(r[i])));
  const widths = cols.map((c, i) => Math.max(c.title.length, ...text.map((r) => r[i]!.length)));
  const align = cols.map((c, i) => c.align ?? (i === 0 ? 'left' : 'right'));
  const line = (cells: string[]) => cells.map((s, i) => (align[i] === 'left' ? s.padEnd(widths[i]!) : s.padStart(widths[i]!))).join('  ').trimEnd();
  const out = [line(cols.map((c) => c.title)), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const r of text) out.push(line(r));
  return out.join('\n');
}

function cellText(v: Cell): string {
  if (v === null || v === undefined || (typeof v === 'number' && !Number.isFinite(v))) return '-';
  return typeof v === 'number' ? fmt(v) : v;
}

/** Numbers with thousands separators; fewer decimals as they grow. */
export function fmt(v: number): string {
  const a = Math.abs(v);
  const digits = a >= 100 ? 0 : a >= 10 ? 1 : 2;
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
