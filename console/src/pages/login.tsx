// Signing in: the token is sent once and kept by the server in an HttpOnly cookie; the page never
// stores it.
import { useState } from "preact/hooks";
import { ApiError, login } from "../api.js";

export function Login(props: { reason: string; onSignedIn: () => void }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await login(token);
      props.onSignedIn();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };
  return (
    <main class="login">
      <h1>afs console</h1>
      <p class="muted">{props.reason}</p>
      <form onSubmit={submit}>
        <label for="token">Token</label>
        <input
          id="token"
          type="password"
          autocomplete="off"
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          placeholder="afs_…"
          required
        />
        <button type="submit">Sign in</button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
      <p class="muted">
        Issue a token with <code>afs token issue</code>.
      </p>
    </main>
  );
}
