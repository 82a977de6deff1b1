// Where a process spent its time, from the .cpuprofile `node --cpu-prof` writes: self and inclusive
// time per function (name, file, line), largest first. Used to find the content index builder's
// costs (issue 22): `AFS_DAEMON=off AFS_INDEX_BACKGROUND=off node --cpu-prof --cpu-prof-dir=DIR
// dist/cli/main.js index builder`, then this on the file. The profile samples wall time: on a busy
// machine, time the process waited for a core lands on whatever it was running.
// Run: node --import tsx bench/cpu-profile.ts FILE.cpuprofile [--top N]
import { readFileSync } from "node:fs";
import { isMain } from "./lib.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface FunctionTime {
  name: string;
  /** Microseconds. */
  self: number;
  /** Microseconds, counting each function once per sample however deep its recursion. */
  inclusive: number;
}

/** Self and inclusive time per function of a profile, in microseconds, largest self time first. */
export function summarize(profile: Profile): { total: number; functions: FunctionTime[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const spent = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    spent.set(id, (spent.get(id) ?? 0) + dt);
    total += dt;
  });
  const name = (n: ProfileNode): string => {
    const f = n.callFrame;
    return `${f.functionName || "(anonymous)"} ${f.url.split("/").slice(-2).join("/")}:${f.lineNumber + 1}`;
  };
  const functions = new Map<string, FunctionTime>();
  const entry = (key: string): FunctionTime => {
    let e = functions.get(key);
    if (!e) {
      e = { name: key, self: 0, inclusive: 0 };
      functions.set(key, e);
    }
    return e;
  };
  for (const [id, dt] of spent) {
    const leaf = byId.get(id);
    if (!leaf) continue;
    entry(name(leaf)).self += dt;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (!node) break;
      const key = name(node);
      if (seen.has(key)) continue;
      seen.add(key);
      entry(key).inclusive += dt;
    }
  }
  return { total, functions: [...functions.values()].sort((a, b) => b.self - a.self) };
}

function main(): void {
  const file = process.argv[2];
  if (!file) {
    console.error("usage: node --import tsx bench/cpu-profile.ts FILE.cpuprofile [--top N]");
    process.exit(2);
  }
  const at = process.argv.indexOf("--top");
  const top = at > 0 ? Number(process.argv[at + 1]) : 30;
  const { total, functions } = summarize(JSON.parse(readFileSync(file, "utf8")) as Profile);
  const line = (us: number, what: string): string =>
    `${(us / 1000).toFixed(0).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${what}`;
  console.log(`${(total / 1000).toFixed(0)} ms sampled\n\nself time`);
  for (const f of functions.slice(0, top)) console.log(line(f.self, f.name));
  console.log("\ninclusive time");
  const inclusive = [...functions].sort((a, b) => b.inclusive - a.inclusive).slice(0, top);
  for (const f of inclusive) console.log(line(f.inclusive, f.name));
}

if (isMain(import.meta.url)) main();
