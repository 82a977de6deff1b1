import { Link } from "../router.js";

export function NotFound(props: { path: string }) {
  return (
    <section>
      <h1>Nothing here</h1>
      <p>
        The console has no page at <code>{props.path}</code>. <Link href="/">See the workspaces</Link>.
      </p>
    </section>
  );
}
