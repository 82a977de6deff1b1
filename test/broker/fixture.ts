// Shared setup for the broker tests: a root directory beside a canary directory and a sibling
// whose name extends the root's, symlinks of every kind pointing out, and a call helper that
// returns the wire error (toBrokerError) instead of throwing.
import { mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { toBrokerError } from "../../src/protocols/broker/errors.js";
import type { BrokerHost } from "../../src/protocols/broker/host.js";

export type Outcome =
  | { ok: true; result: Record<string, unknown> }
  | { ok: false; error: ReturnType<typeof toBrokerError> };

export async function call(host: BrokerHost, method: string, params: unknown, server = "srv"): Promise<Outcome> {
  try {
    return { ok: true, result: await host.handle(server, method, params) };
  } catch (e) {
    return { ok: false, error: toBrokerError(e) };
  }
}

export async function layout(base: string): Promise<{ root: string; canary: string; evil: string }> {
  const root = join(base, "root");
  const canary = join(base, "canary");
  const evil = join(base, "root-evil");
  await mkdir(join(root, "sub"), { recursive: true });
  await mkdir(canary);
  await mkdir(evil);
  await writeFile(join(root, "a.txt"), "alpha\n");
  await writeFile(join(root, "sub", "b.txt"), "beta\n");
  await writeFile(join(canary, "canary.txt"), "CANARY-SECRET");
  await writeFile(join(evil, "secret.txt"), "EVIL-SECRET");
  await symlink("../canary/canary.txt", join(root, "link-file"));
  await symlink("../canary", join(root, "link-dir"));
  await symlink("../canary/absent.txt", join(root, "dangling"));
  await symlink("chain2", join(root, "chain1"));
  await symlink("../canary", join(root, "chain2"));
  return { root, canary, evil };
}

/** Names, contents and mtimes of a directory: must stay identical while the broker is attacked. */
export async function snapshot(dir: string): Promise<string> {
  const names = (await readdir(dir)).sort();
  const parts = await Promise.all(
    names.map(async (n) => `${n}:${(await stat(join(dir, n))).mtimeMs}:${await readFile(join(dir, n), "utf8")}`),
  );
  return parts.join("\n");
}

export const until = async (check: () => boolean, ms = 5000): Promise<void> => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
};
