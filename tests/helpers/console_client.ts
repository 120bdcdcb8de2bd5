// Tests' browserless console user: GETs and form POSTs with the sign-in cookie and this origin,
// never following redirects so tests see them.
import type { TestApi } from "./api_server.ts";

export interface Page {
  status: number;
  headers: Headers;
  html: string;
  location: string | null;
}

export interface ConsoleClient {
  cookie?: string;
  get(path: string): Promise<Page>;
  post(path: string, form: Record<string, string>, headers?: Record<string, string>): Promise<Page>;
}

async function toPage(res: Response): Promise<Page> {
  return {
    status: res.status,
    headers: res.headers,
    html: await res.text(),
    location: res.headers.get("location"),
  };
}

/** A client with no cookie; `signIn` gives one that is signed in. */
export function consoleClient(api: TestApi, cookie?: string): ConsoleClient {
  const client: ConsoleClient = {
    cookie,
    get: async (path) =>
      toPage(
        await fetch(api.url + path, {
          redirect: "manual",
          headers: client.cookie ? { cookie: client.cookie } : {},
        }),
      ),
    post: async (path, form, headers = {}) =>
      toPage(
        await fetch(api.url + path, {
          method: "POST",
          redirect: "manual",
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            origin: api.url,
            ...(client.cookie ? { cookie: client.cookie } : {}),
            ...headers,
          },
          body: new URLSearchParams(form),
        }),
      ),
  };
  return client;
}

/** The `name=value` part of the console cookie a response set, if any. */
export function consoleCookie(page: Page): string | undefined {
  const set = page.headers.getSetCookie().find((c) => c.startsWith("console_session="));
  return set?.split(";")[0];
}

export async function signIn(api: TestApi): Promise<ConsoleClient> {
  const client = consoleClient(api);
  const page = await client.post("/console/sign-in", { token: api.adminToken });
  const cookie = consoleCookie(page);
  if (page.status !== 303 || !cookie) throw new Error(`sign-in failed: ${page.status}`);
  client.cookie = cookie;
  return client;
}
