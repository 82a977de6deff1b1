// A byte progress bar for import and export, drawn on stderr only when stderr is a terminal;
// anywhere else (pipes, CI, tests) the callback does nothing and nothing extra is printed.
import { Presets, SingleBar } from "cli-progress";
import type { Sink } from "./invocation.js";
import { bytes } from "./output.js";

export interface ProgressBar {
  /** Pass as the engine's onProgress callback: (bytes done, bytes total). */
  update: ((done: number, total: number) => void) | undefined;
  stop(): void;
}

/** Drawn on `stderr` when it is a terminal; `format` shows the amounts (bytes by default; String for counts). */
export function progressBar(label: string, stderr: Sink, format: (n: number) => string = bytes): ProgressBar {
  const stream = stderr.terminal;
  if (!stream) return { update: undefined, stop: () => {} };
  let bar: SingleBar | null = null;
  return {
    update: (done, total) => {
      if (!bar) {
        bar = new SingleBar(
          {
            stream,
            format: `${label} [{bar}] {percentage}% | {done} / {size} | ETA {eta_formatted}`,
            hideCursor: true,
            clearOnComplete: true,
          },
          Presets.shades_classic,
        );
        bar.start(total, 0, { done: format(0), size: format(total) });
      }
      // An import's total grows as its walk finds files (it is streamed, never counted up front).
      if (total !== bar.getTotal()) bar.setTotal(total);
      bar.update(done, { done: format(done), size: format(total) });
    },
    stop: () => bar?.stop(),
  };
}
