// The sign-in page: one field, the admin token.
import type { FC } from "hono/jsx";
import { ErrorNotice, Layout } from "./layout.tsx";

export const SignInPage: FC<{ next: string; error?: string; signedOut?: boolean }> = (
  { next, error, signedOut },
) => (
  <Layout title="Sign in" signedIn={false}>
    <h1>Sign in</h1>
    <ErrorNotice message={error} />
    {signedOut && <p class="notice">Signed out.</p>}
    <form class="stack" method="post" action="/console/sign-in">
      <input type="hidden" name="next" value={next} />
      <label>
        Admin token
        <input
          type="password"
          name="token"
          autocomplete="current-password"
          required
          autofocus
        />
      </label>
      <p class="muted small">
        The ADMIN_TOKEN the API was started with (printed by <code>deno task run</code>).
      </p>
      <div>
        <button type="submit">Sign in</button>
      </div>
    </form>
  </Layout>
);
