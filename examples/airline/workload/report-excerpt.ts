/**
 * A short excerpt of `toolrun report`'s text for the demo's summary: the report as printed, with
 * the tool and pattern lists cut to their first entries (the report sorts both by count, most
 * first) and a line saying how many were left out.
 */

/** Options of {@link excerptFailureReport}. */
export interface ReportExcerptOptions {
  /** Tools kept in the `Tools` section (each with its detail lines). @defaultValue 3 */
  tools?: number;
  /** Lines kept in the `Failure patterns` section. @defaultValue 3 */
  patterns?: number;
  /** Drop the failure types that never occurred (0 calls). @defaultValue true */
  hideZeroTypes?: boolean;
  /** Longer lines are cut, with `…`. @defaultValue 130 */
  maxLineLength?: number;
}

/** Sections of the report text: a title line, then lines indented by two spaces. */
function cutSection(lines: readonly string[], keep: number, isEntry: (line: string) => boolean, noun: string): string[] {
  const [title, ...body] = lines;
  const kept: string[] = [];
  let entries = 0;
  let dropped = 0;
  for (const line of body) {
    if (isEntry(line)) entries += 1;
    if (entries <= keep) kept.push(line);
    else if (isEntry(line)) dropped += 1;
  }
  return [title ?? '', ...kept, ...(dropped > 0 ? [`  … ${dropped} more ${noun}${dropped === 1 ? '' : 's'}`] : [])];
}

/**
 * Cuts the text report of `toolrun report` (blocks separated by blank lines) to what a person
 * reads at a glance. Text that is not in the report's layout is returned unchanged.
 */
export function excerptFailureReport(text: string, options: ReportExcerptOptions = {}): string[] {
  const tools = options.tools ?? 3;
  const patterns = options.patterns ?? 3;
  const maxLineLength = options.maxLineLength ?? 130;
  const cut = (line: string) => (line.length > maxLineLength ? `${line.slice(0, maxLineLength - 1)}…` : line);
  const blocks = text
    .trimEnd()
    .split(/\n\s*\n/)
    .map((block) => block.split('\n'));
  return blocks.flatMap((block, index) => {
    const title = block[0] ?? '';
    let lines = block;
    if (title === 'Tools') lines = cutSection(block, tools, (line) => /^ {2}\S/.test(line), 'tool');
    else if (title === 'Failure patterns') lines = cutSection(block, patterns, (line) => /^ {2}\S/.test(line), 'pattern');
    else if (title === 'Failure types' && (options.hideZeroTypes ?? true))
      lines = [title, ...block.slice(1).filter((line) => !/^\s+\S+\s+0\s+0\.0%$/.test(line))];
    return (index === 0 ? lines : ['', ...lines]).map(cut);
  });
}
