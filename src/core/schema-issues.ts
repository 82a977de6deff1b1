// How a schema's complaints read, stated once for every edge (CLI, MCP, ACP, broker): each issue
// as "where: what", joined by "; ". Typed by shape, so core/ needs no zod and the CLI's error edge
// does not load it.

/** One complaint of a schema (a zod issue has this shape). */
export interface SchemaIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * "a.b: message; other: message" (an issue about the whole value is just its message). `names`
 * renames an issue by its first path segment, e.g. to the CLI flag the user typed.
 */
export function issuesText(issues: readonly SchemaIssue[], names: Readonly<Record<string, string>> = {}): string {
  return issues
    .map((issue) => {
      const path = issue.path.map(String);
      const at = names[path[0] ?? ""] ?? path.join(".");
      return at ? `${at}: ${issue.message}` : issue.message;
    })
    .join("; ");
}

/** A schema failure (a ZodError), told by shape rather than `instanceof`. */
export const isSchemaError = (e: unknown): e is Error & { issues: readonly SchemaIssue[] } =>
  e instanceof Error && e.name === "ZodError" && Array.isArray((e as { issues?: unknown }).issues);
