/**
 * Where a document stops being JSON: a byte offset (from 0) in a streamed document (a plan, a
 * state), or a line and column (from 1, the column in characters) in a file a person writes (the inputs).
 */
export type JsonSyntaxPosition = { offset: number } | { line: number; column?: number };

/** Why a document is not acceptable JSON, and where: the one error every JSON reader of the runner throws for it. */
export class JsonSyntaxError extends Error {
  readonly offset: number | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(
    readonly problem: string,
    at: JsonSyntaxPosition,
  ) {
    super(
      'offset' in at
        ? `${problem} at byte ${at.offset}`
        : at.column === undefined
          ? `line ${at.line}: ${problem}`
          : `line ${at.line} column ${at.column}: ${problem}`,
    );
    this.name = 'JsonSyntaxError';
    this.offset = 'offset' in at ? at.offset : undefined;
    this.line = 'line' in at ? at.line : undefined;
    this.column = 'line' in at ? at.column : undefined;
  }
}
