// How `afs acp` shows a turn as it happens: the agent's text streams as it arrives, each tool call
// gets a line (and its diff, when it carries one), and afs's own notes go to stderr.
import type * as acp from "@agentclientprotocol/sdk";
import { unifiedPatch } from "../core/unified-diff.js";

export class TurnView {
  private readonly titles = new Map<string, string>();
  private midLine = false;

  /** `out`: the command's stdout. */
  constructor(private readonly out: (text: string) => void) {}

  update(notification: acp.SessionNotification): void {
    const u = notification.update;
    switch (u.sessionUpdate) {
      case "agent_message_chunk":
        if (u.content.type === "text") this.text(u.content.text);
        return;
      case "tool_call":
        this.titles.set(u.toolCallId, u.title);
        this.line(`> ${u.title}${u.kind ? ` (${u.kind})` : ""}`);
        this.diffs(u.content);
        return;
      case "tool_call_update": {
        const title = u.title ?? this.titles.get(u.toolCallId) ?? u.toolCallId;
        if (u.title) this.titles.set(u.toolCallId, u.title);
        this.diffs(u.content);
        if (u.status === "completed" || u.status === "failed") {
          this.line(`${u.status === "completed" ? "  done" : "  failed"}: ${title}`);
          this.titles.delete(u.toolCallId);
        }
        return;
      }
      case "plan":
        this.line(u.entries.map((e) => `  [${e.status}] ${e.content}`).join("\n"));
        return;
      default:
        return;
    }
  }

  /** Ends a turn's output on a fresh line. */
  end(): void {
    if (this.midLine) this.out("\n");
    this.midLine = false;
  }

  private text(text: string): void {
    this.out(text);
    this.midLine = !text.endsWith("\n");
  }

  private line(text: string): void {
    this.end();
    this.out(`${text}\n`);
  }

  private diffs(content: acp.ToolCallContent[] | null | undefined): void {
    for (const c of content ?? []) {
      if (c.type === "diff") this.line(unifiedPatch(c.path, c.oldText ?? null, c.newText).trimEnd());
    }
  }
}
