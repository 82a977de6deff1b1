// Names people and agents choose: workspaces, checkpoints and template slugs share one rule.
import { AfsError } from "../core/errors.js";

export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const MAX_NAME = 128;

export function checkName(kind: "workspace" | "checkpoint" | "template", name: string): string {
  if (typeof name !== "string" || !NAME_PATTERN.test(name) || name.length > MAX_NAME) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `invalid ${kind} name ${JSON.stringify(name)}: use letters, digits, ".", "_" and "-", starting with a letter or digit (at most ${MAX_NAME} characters)`,
      { [kind]: name },
    );
  }
  return name;
}
