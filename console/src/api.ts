// The console's one way to the server: every operation is an MCP tool called by name
// (POST /api/tools/NAME), answered with the tool's structured result or {error: {code, message}}.

export interface Session {
  version: string;
  auth: "token" | "none";
  profile: string;
  workspace: string | null;
  pinned: boolean;
  actor: string | null;
  /** The tools this session may call: a page offers an action only when its tool is here. */
  tools: string[];
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

async function send<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { ...init.headers, "Content-Type": "application/json" };
  }
  const res = await fetch(path, init);
  const data = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
  if (!res.ok) {
    const error = data.error ?? {};
    throw new ApiError(res.status, error.code ?? "IO_ERROR", error.message ?? `${res.status} ${res.statusText}`);
  }
  return data as T;
}

export const getSession = (): Promise<Session> => send("GET", "/api/session");
export const login = (token: string): Promise<unknown> => send("POST", "/api/login", { token });
export const logout = (): Promise<unknown> => send("POST", "/api/logout");

/** Calls one tool; its result type is the tool's output schema. */
export const call = <T = Record<string, unknown>>(tool: string, args: Record<string, unknown> = {}): Promise<T> =>
  send("POST", `/api/tools/${encodeURIComponent(tool)}`, args);
