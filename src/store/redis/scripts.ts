// The Lua scripts of the Redis store. Each multi-key change is one script that checks every
// precondition before its first write, so a failed check leaves every key as it was and no lock
// is held across round trips. Workspace scripts take the keys of keys.ts WORKSPACE_KEYS as KEYS
// (one hash tag, one Cluster slot). A failed check returns {CODE, detail}; success {"OK", value}.
import { createHash } from "node:crypto";

/** What Redis ≥ 7 reads from a script's shebang line. */
type Flags = "" | "no-writes" | "allow-oom";

export interface ScriptSource {
  source: string;
  sha: string;
}

export class Script {
  /**
   * For Redis ≥ 7: a script with a shebang is refused whole when the server is out of memory
   * (QUOTA_EXCEEDED), before any of its writes. Scripts that only delete, or make one small
   * write like a revocation, may still run then: they are how memory is freed and access cut.
   */
  readonly flagged: ScriptSource;
  /** For Redis 6, which refuses shebangs (it checks memory at a script's first write, then lets it finish). */
  readonly legacy: ScriptSource;

  constructor(body: string, flags: Flags = "") {
    this.flagged = source(`#!lua${flags ? ` flags=${flags}` : ""}\n${body}`);
    this.legacy = source(body);
  }
}

const source = (text: string): ScriptSource => ({ source: text, sha: createHash("sha1").update(text).digest("hex") });

/** Shared by the workspace scripts: KEYS = meta, cp, cpname, ov, ovp, ovc, ev, evp. */
const WORKSPACE_LIB = `
local META, CP, CPNAME, OV, OVP, OVC, EV = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local EVP = KEYS[8]
-- The per-path index member of an event: the path, then its seq zero-padded so members sort by it.
local function evpmember(path, seq)
  return path .. "\0" .. string.format("%016d", tonumber(seq))
end
local function parent(p)
  local i = string.match(p, ".*()/")
  if i == nil or i <= 1 then return "/" end
  return string.sub(p, 1, i - 1)
end
local function ovdel(p)
  redis.call("HDEL", OV, p)
  redis.call("ZREM", OVP, p)
  redis.call("ZREM", OVC, parent(p) .. "\\0" .. p)
end
local function ovset(p, v)
  redis.call("HSET", OV, p, v)
  redis.call("ZADD", OVP, 0, p)
  redis.call("ZADD", OVC, 0, parent(p) .. "\\0" .. p)
end
-- The current revision, or nil and the failure to return. Event ids follow the revision, so a
-- log already past it would make XADD fail half way through the script: refuse that up front.
local function checkrev(expect)
  local rev = redis.call("HGET", META, "revision")
  if not rev then return nil, {"NOT_FOUND"} end
  if rev ~= expect then return nil, {"CONFLICT", rev} end
  local last = redis.call("XREVRANGE", EV, "+", "-", "COUNT", 1)[1]
  if last and tonumber(string.match(last[1], "^(%d+)")) > tonumber(rev) then return nil, {"LOG_AHEAD", last[1]} end
  return tonumber(rev)
end
local function event(seq, op, path, old, new, actor, surface, now)
  redis.call("XADD", EV, string.format("%d-0", seq), "op", op, "path", path, "old", old, "new", new,
    "actor", actor, "surface", surface, "time", now)
  redis.call("ZADD", EVP, 0, evpmember(path, seq))
end
`;

/** ARGV: expect, now, nclear, (lo, hi)×nclear, nset, (path, value)×nset, nevents, (op, path, old, new, actor, surface)×nevents. */
export const COMMIT = new Script(`${WORKSPACE_LIB}
local rev, failure = checkrev(ARGV[1])
if not rev then return failure end
local now = ARGV[2]
local i = 3
local nclear = tonumber(ARGV[i]); i = i + 1
for _ = 1, nclear do
  local doomed = redis.call("ZRANGEBYLEX", OVP, ARGV[i], ARGV[i + 1])
  for _, p in ipairs(doomed) do ovdel(p) end
  i = i + 2
end
local nset = tonumber(ARGV[i]); i = i + 1
for _ = 1, nset do
  ovset(ARGV[i], ARGV[i + 1])
  i = i + 2
end
local nevents = tonumber(ARGV[i]); i = i + 1
local seq = rev
for _ = 1, nevents do
  seq = seq + 1
  event(seq, ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], now)
  i = i + 6
end
redis.call("HSET", META, "revision", string.format("%d", seq), "updatedAt", now)
return {"OK", seq}
`);

/**
 * ARGV: expect, now, head, clearOverlay (1|0), checkpoint id ("" for none), its name, its JSON,
 * a problem found before the script ("" | ID_TAKEN), then the event (op, path, old, new, actor, surface).
 */
export const MOVE_HEAD = new Script(`${WORKSPACE_LIB}
local rev, failure = checkrev(ARGV[1])
if not rev then return failure end
local now, head, cpid, cpname = ARGV[2], ARGV[3], ARGV[5], ARGV[6]
if cpid ~= "" then
  if ARGV[8] == "ID_TAKEN" or redis.call("HEXISTS", CP, cpid) == 1 then return {"ID_TAKEN"} end
  if redis.call("HEXISTS", CPNAME, cpname) == 1 then return {"NAME_TAKEN"} end
end
if head ~= cpid and redis.call("HEXISTS", CP, head) == 0 then return {"NO_TARGET"} end
if cpid ~= "" then
  redis.call("HSET", CP, cpid, ARGV[7])
  redis.call("HSET", CPNAME, cpname, cpid)
end
if ARGV[4] == "1" then redis.call("DEL", OV, OVP, OVC) end
event(rev + 1, ARGV[9], ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14], now)
redis.call("HSET", META, "head", head, "revision", string.format("%d", rev + 1), "updatedAt", now)
return {"OK", rev + 1}
`);

/** ARGV: name, description, head, revision, createdAt, updatedAt, checkpoint id, name, JSON, problem. */
export const CREATE_WORKSPACE = new Script(`${WORKSPACE_LIB}
if redis.call("EXISTS", META) == 1 then return {"EXISTS"} end
if ARGV[10] == "ID_TAKEN" then return {"ID_TAKEN"} end
redis.call("DEL", CP, CPNAME, OV, OVP, OVC, EV, EVP)
redis.call("HSET", META, "name", ARGV[1], "description", ARGV[2], "head", ARGV[3], "revision", ARGV[4],
  "createdAt", ARGV[5], "updatedAt", ARGV[6], "evp", "1")
redis.call("HSET", CP, ARGV[7], ARGV[9])
redis.call("HSET", CPNAME, ARGV[8], ARGV[7])
return {"OK", 1}
`);

/**
 * Creates a workspace exactly as dumped. ARGV: a checkpoint id found taken elsewhere ("" for none),
 * name, description, head, revision, createdAt, updatedAt, ncp, (id, name, JSON)×ncp,
 * nov, (path, value)×nov, nev, (seq, op, path, old, new, actor, surface, time)×nev. Every check (the name,
 * checkpoint ids and names unique) comes before the first write.
 */
export const IMPORT_WORKSPACE = new Script(`${WORKSPACE_LIB}
if redis.call("EXISTS", META) == 1 then return {"EXISTS"} end
if ARGV[1] ~= "" then return {"ID_TAKEN", ARGV[1]} end
local ncp = tonumber(ARGV[8])
local ids, names = {}, {}
local i = 9
for _ = 1, ncp do
  if ids[ARGV[i]] then return {"ID_TAKEN", ARGV[i]} end
  if names[ARGV[i + 1]] then return {"NAME_TAKEN", ARGV[i + 1]} end
  ids[ARGV[i]] = true
  names[ARGV[i + 1]] = true
  i = i + 3
end
redis.call("DEL", CP, CPNAME, OV, OVP, OVC, EV, EVP)
redis.call("HSET", META, "name", ARGV[2], "description", ARGV[3], "head", ARGV[4], "revision", ARGV[5],
  "createdAt", ARGV[6], "updatedAt", ARGV[7], "evp", "1")
i = 9
for _ = 1, ncp do
  redis.call("HSET", CP, ARGV[i], ARGV[i + 2])
  redis.call("HSET", CPNAME, ARGV[i + 1], ARGV[i])
  i = i + 3
end
local nov = tonumber(ARGV[i]); i = i + 1
for _ = 1, nov do
  ovset(ARGV[i], ARGV[i + 1])
  i = i + 2
end
local nev = tonumber(ARGV[i]); i = i + 1
for _ = 1, nev do
  redis.call("XADD", EV, ARGV[i] .. "-0", "op", ARGV[i + 1], "path", ARGV[i + 2], "old", ARGV[i + 3],
    "new", ARGV[i + 4], "actor", ARGV[i + 5], "surface", ARGV[i + 6], "time", ARGV[i + 7])
  redis.call("ZADD", EVP, 0, evpmember(ARGV[i + 2], ARGV[i]))
  i = i + 8
end
return {"OK", 1}
`);

/** Returns {"OK", 1, checkpoint ids} after deleting every key of the workspace, {"OK", 0} when absent. */
export const DELETE_WORKSPACE = new Script(
  `${WORKSPACE_LIB}
if redis.call("EXISTS", META) == 0 then return {"OK", 0} end
local ids = redis.call("HKEYS", CP)
redis.call("DEL", META, CP, CPNAME, OV, OVP, OVC, EV, EVP)
return {"OK", 1, ids}
`,
  "allow-oom",
);

/** ARGV: checkpoint id. CONFLICT when it is head. */
export const DELETE_CHECKPOINT = new Script(
  `${WORKSPACE_LIB}
if redis.call("HGET", META, "head") == ARGV[1] then return {"CONFLICT"} end
local json = redis.call("HGET", CP, ARGV[1])
if not json then return {"OK", 0} end
local name = cjson.decode(json).name
if redis.call("HGET", CPNAME, name) == ARGV[1] then redis.call("HDEL", CPNAME, name) end
redis.call("HDEL", CP, ARGV[1])
return {"OK", 1}
`,
  "allow-oom",
);

/**
 * A consistent read of overlay rows: ARGV lo, hi (ZRANGEBYLEX bounds) and childrenOnly (1|0) with
 * dir. Returns path, value, path, value, … sorted by path (bytewise, like SQLite's BINARY order).
 */
export const OVERLAY_UNDER = new Script(
  `${WORKSPACE_LIB}
local out = {}
if ARGV[3] == "1" then
  local dir = ARGV[4]
  local members = redis.call("ZRANGEBYLEX", OVC, "(" .. dir .. "\\0", "(" .. dir .. "\\1")
  for _, m in ipairs(members) do
    local p = string.sub(m, #dir + 2)
    if p ~= dir then
      out[#out + 1] = p
      out[#out + 1] = redis.call("HGET", OV, p)
    end
  end
else
  for _, p in ipairs(redis.call("ZRANGEBYLEX", OVP, ARGV[1], ARGV[2])) do
    out[#out + 1] = p
    out[#out + 1] = redis.call("HGET", OV, p)
  end
end
return out
`,
  "no-writes",
);

/** KEYS[1] an object's hash key. ARGV size, time, data. 1 when stored, 0 when it was there (content addressing: first bytes stand). */
export const PUT_OBJECT = new Script(`
if redis.call("EXISTS", KEYS[1]) == 1 then return 0 end
redis.call("HSET", KEYS[1], "s", ARGV[1], "t", ARGV[2], "d", ARGV[3])
return 1
`);

/** KEYS[1] a chunk. ARGV now. Refreshes a present chunk's time (so a sweep spares it) and says whether it was there. */
export const TOUCH_CHUNK = new Script(`
if redis.call("EXISTS", KEYS[1]) == 0 then return 0 end
redis.call("HSET", KEYS[1], "t", ARGV[1])
return 1
`);

/** KEYS[1] a blob or chunk. ARGV its re-encoded bytes. Replaces them only while it holds bytes (never recreates one gc deleted). */
export const REWRITE_VALUE = new Script(`
if redis.call("HEXISTS", KEYS[1], "d") == 0 then return 0 end
redis.call("HSET", KEYS[1], "d", ARGV[1])
return 1
`);

/** KEYS blob, layout, draft layout. ARGV size, time, chunk size, chunk count. Moves the draft into place. */
export const LINK_BLOB = new Script(`
if redis.call("EXISTS", KEYS[1]) == 1 then redis.call("DEL", KEYS[3]); return 0 end
if redis.call("LLEN", KEYS[3]) ~= tonumber(ARGV[4]) then redis.call("DEL", KEYS[3]); return -1 end
redis.call("RENAME", KEYS[3], KEYS[2])
redis.call("PERSIST", KEYS[2])
redis.call("HSET", KEYS[1], "s", ARGV[1], "t", ARGV[2], "cb", ARGV[3], "n", ARGV[4])
return 1
`);

/** KEYS object, its layout (blobs). 1 when it existed. */
export const DELETE_OBJECT = new Script(
  `
local n = redis.call("EXISTS", KEYS[1])
redis.call("DEL", KEYS[1], KEYS[2])
return n
`,
  "allow-oom",
);

/** KEYS[1] a chunk no blob uses. ARGV createdBefore. Its size when deleted, -1 when too young, -2 when gone. */
export const SWEEP_CHUNK = new Script(
  `
local t = redis.call("HGET", KEYS[1], "t")
if not t then return -2 end
if tonumber(t) >= tonumber(ARGV[1]) then return -1 end
local s = redis.call("HGET", KEYS[1], "s")
redis.call("DEL", KEYS[1])
return tonumber(s)
`,
  "allow-oom",
);

/** KEYS tokens, sequence, revocations. ARGV id, JSON, revocation time ("" when not revoked). */
export const PUT_TOKEN = new Script(`
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then return {"EXISTS"} end
local n = redis.call("INCR", KEYS[2])
redis.call("HSET", KEYS[1], ARGV[1], n .. ":" .. ARGV[2])
if ARGV[3] ~= "" then redis.call("HSET", KEYS[3], ARGV[1], ARGV[3]) end
return {"OK", n}
`);

/** KEYS tokens, revocations. ARGV id, time. Keeps the first revocation time. */
export const REVOKE_TOKEN = new Script(
  `
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call("HSETNX", KEYS[2], ARGV[1], ARGV[2])
return 1
`,
  "allow-oom",
);

/** Drops the template mark of workspace `ws` (KEYS slugs, marks). */
const UNMARK = `
local old = redis.call("HGET", MARKS, ws)
if old and redis.call("HGET", SLUGS, old) == ws then redis.call("HDEL", SLUGS, old) end
redis.call("HDEL", MARKS, ws)
`;

/** KEYS slugs, marks. ARGV workspace. Unmarks it; only deletes, so it runs when Redis is out of memory too. */
export const UNMARK_TEMPLATE = new Script(
  `
local SLUGS, MARKS, ws = KEYS[1], KEYS[2], ARGV[1]
${UNMARK}
return {"OK", 1}
`,
  "allow-oom",
);

/**
 * KEYS slugs (slug → workspace), marks (workspace → slug). ARGV workspace, slug, and a holder of the
 * slug whose workspace is gone, which may be displaced ("" for none). Replaces any slug the
 * workspace had; {"TAKEN", holder} when another workspace holds the slug.
 */
export const SET_TEMPLATE = new Script(`
local SLUGS, MARKS = KEYS[1], KEYS[2]
local ws, slug, stale = ARGV[1], ARGV[2], ARGV[3]
local holder = redis.call("HGET", SLUGS, slug)
if holder and holder ~= ws and holder ~= stale then return {"TAKEN", holder} end
${UNMARK}
if holder and holder ~= ws and redis.call("HGET", MARKS, holder) == slug then redis.call("HDEL", MARKS, holder) end
redis.call("HSET", SLUGS, slug, ws)
redis.call("HSET", MARKS, ws, slug)
return {"OK", 1}
`);

/**
 * One path's events, newest first: ARGV path, before (seq; events below it; "" for all), limit. Returns
 * {"OK", entries} (stream entries as XRANGE gives them), or {"NO_INDEX"} while the index does not
 * yet cover a workspace made before it existed (INDEX_EVENTS fills it in).
 */
export const PATH_EVENTS = new Script(
  `${WORKSPACE_LIB}
if redis.call("HGET", META, "evp") ~= "1" then return {"NO_INDEX"} end
local path = ARGV[1]
local top = "(" .. path .. "\\1"
if ARGV[2] ~= "" then top = "(" .. evpmember(path, ARGV[2]) end
local members = redis.call("ZREVRANGEBYLEX", EVP, top, "[" .. path .. "\\0", "LIMIT", 0, tonumber(ARGV[3]))
local out = {}
for _, m in ipairs(members) do
  local id = string.format("%d-0", tonumber(string.sub(m, #path + 2)))
  local entry = redis.call("XRANGE", EV, id, id)[1]
  if entry then out[#out + 1] = entry end
end
return {"OK", out}
`,
  "no-writes",
);

/**
 * Indexes a stream made before the per-path index, a batch at a time: ARGV after (seq), count.
 * Returns the last seq indexed, or 0 once the whole stream is covered (then meta evp=1). Indexing
 * an event twice is harmless (a set), so commits landing in between need no care.
 */
export const INDEX_EVENTS = new Script(`${WORKSPACE_LIB}
local entries = redis.call("XRANGE", EV, string.format("%d-0", tonumber(ARGV[1]) + 1), "+", "COUNT", tonumber(ARGV[2]))
local last = 0
for _, e in ipairs(entries) do
  local f = e[2]
  for j = 1, #f, 2 do
    if f[j] == "path" then redis.call("ZADD", EVP, 0, evpmember(f[j + 1], string.match(e[1], "^(%d+)"))) end
  end
  last = tonumber(string.match(e[1], "^(%d+)"))
end
if #entries < tonumber(ARGV[2]) then
  if redis.call("EXISTS", META) == 1 then redis.call("HSET", META, "evp", "1") end
  return 0
end
return last
`);

/** ARGV: field, value, set (1) or remove (0). NOT_FOUND when the workspace does not exist. */
export const SET_SETTING = new Script(`${WORKSPACE_LIB}
if redis.call("EXISTS", META) == 0 then return {"NOT_FOUND"} end
if ARGV[3] == "1" then redis.call("HSET", META, ARGV[1], ARGV[2]) else redis.call("HDEL", META, ARGV[1]) end
return {"OK", 1}
`);

/** KEYS approvals, seq. ARGV id, "<createdAt>:<request JSON>". */
export const PUT_APPROVAL = new Script(`
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then return {"EXISTS"} end
local n = redis.call("INCR", KEYS[2])
redis.call("HSET", KEYS[1], ARGV[1], n .. ":" .. ARGV[2])
return {"OK", n}
`);

/** KEYS approvals, decisions. ARGV id, decision. The first decision stands. */
export const DECIDE_APPROVAL = new Script(`
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 0 then return 0 end
return redis.call("HSETNX", KEYS[2], ARGV[1], ARGV[2])
`);

/** KEYS approvals, decisions, revocations. ARGV id, time. Keeps the first revocation time. */
export const REVOKE_APPROVAL = new Script(
  `
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 0 or redis.call("HEXISTS", KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call("HSETNX", KEYS[3], ARGV[1], ARGV[2])
return 1
`,
  "allow-oom",
);

/** KEYS approvals, decisions, revocations. ARGV ids. Returns how many requests went. */
export const DELETE_APPROVALS = new Script(
  `
local n = 0
for _, id in ipairs(ARGV) do
  n = n + redis.call("HDEL", KEYS[1], id)
  redis.call("HDEL", KEYS[2], id)
  redis.call("HDEL", KEYS[3], id)
end
return n
`,
  "allow-oom",
);
