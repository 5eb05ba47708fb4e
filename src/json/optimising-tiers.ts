// V8's optimising compilers (Maglev where V8 has it on, TurboFan) held off while the process reads its
// first MiB of JSON, and on again for everything else. A run reads a few short documents (a `state pull`,
// a `show -json`): compiling the reader for them costs more CPU, on V8's background threads, than
// interpreting it (its baseline code from the startup snapshot's bytecode): with them off the first
// documents read in about half the CPU, and a long one still gets optimised code after its first MiB
// (BENCHMARKS.md, the JSON reader from its first document). Which code V8 runs never changes a result.
//
// Only when the runner was restored from the image's startup snapshot with no V8 flag given (armed by
// main.ts): node's defaults are then the flags this puts back. Off only while a read is under way, so
// nothing else the run does waits on it for long.
import { setFlagsFromString } from 'node:v8';

/** The bytes read with the optimising compilers off: the size where optimising starts to pay (bench/HISTORY.md). */
export const FIRST_BYTES = 1024 * 1024;

/** The V8 flags that turn the optimising compilers off and on again, for this node's V8. */
function tierFlags(v8Version: string, arch: string): { off: string[]; on: string[] } {
  // Maglev is on by default from V8 12 (Node 22) on x64 and arm64; before, it is off and stays off.
  const maglev = Number.parseInt(v8Version, 10) >= 12 && (arch === 'x64' || arch === 'arm64');
  return {
    off: [...(maglev ? ['--no-maglev'] : []), '--no-turbofan'],
    on: [...(maglev ? ['--maglev'] : []), '--turbofan'],
  };
}

/** Whether node runs with its own flags only: none on the command line but the snapshot's blob. */
export function noV8FlagsGiven(execArgv: readonly string[]): boolean {
  return (
    (execArgv.length === 2 && execArgv[0] === '--snapshot-blob') ||
    (execArgv.length === 1 && execArgv[0]!.startsWith('--snapshot-blob='))
  );
}

/** Turns the compilers off and on around the process's reads (the reader calls start/read/end); inert until armed. */
export class FirstReads {
  #flags: { off: string[]; on: string[] } | undefined;
  #left = FIRST_BYTES;
  #reading = 0;
  #off = false;
  readonly #set: (flag: string) => void;

  constructor(set: (flag: string) => void = setFlagsFromString) {
    this.#set = set;
  }

  /** Whether the optimising compilers are off now. */
  get off(): boolean {
    return this.#off;
  }

  arm(v8Version: string, arch: string): void {
    this.#flags = tierFlags(v8Version, arch);
  }

  /** A read starts (reads may overlap). */
  start(): void {
    this.#reading++;
    if (this.#flags !== undefined && this.#left > 0 && !this.#off) this.#turn(true);
  }

  read(bytes: number): void {
    if (this.#flags === undefined) return;
    this.#left -= bytes;
    if (this.#left <= 0 && this.#off) this.#turn(false);
  }

  /** A read ended, however. */
  end(): void {
    if (--this.#reading === 0 && this.#off) this.#turn(false);
  }

  #turn(off: boolean): void {
    this.#off = off;
    for (const flag of off ? this.#flags!.off : this.#flags!.on) this.#set(flag);
  }
}

/** The process's. */
export const firstReads = new FirstReads();
