import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Session } from "./api.js";

export const SessionContext = createContext<Session | null>(null);

/** The signed-in session; pages render only inside the shell, which provides it. */
export function useSession(): Session & { can(tool: string): boolean } {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside the console shell");
  return { ...session, can: (tool: string) => session.tools.includes(tool) };
}
