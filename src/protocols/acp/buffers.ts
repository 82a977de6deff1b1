// Unsaved editor state an embedding host lays over the files: reads see a buffer before the disk,
// and an agent's write to a path with an open buffer goes into the buffer (the host saves it).
import { normalizePath } from "../../core/paths.js";

export class EditorBuffers {
  private readonly open = new Map<string, string>();

  constructor(private readonly onWrite?: (path: string, text: string) => void) {}

  /** Opens (or replaces) the buffer for an absolute host path. */
  set(path: string, text: string): void {
    this.open.set(normalizePath(path), text);
  }

  clear(path: string): void {
    this.open.delete(normalizePath(path));
  }

  get(hostPath: string): string | undefined {
    return this.open.get(hostPath);
  }

  /** Writes into an open buffer and tells the host; false when no buffer is open at the path. */
  write(hostPath: string, text: string): boolean {
    if (!this.open.has(hostPath)) return false;
    this.open.set(hostPath, text);
    this.onWrite?.(hostPath, text);
    return true;
  }
}
