// The page frame and the small pieces every console page uses.
import type { Child, FC } from "hono/jsx";
import { raw } from "hono/html";
import { formatTime } from "./records.ts";

export const SCRIPT_PATH = "/console/assets/console.js";

const CSS = `
:root { color-scheme: light; --fg:#1b1f24; --muted:#6a737d; --line:#d8dee4; --bg:#f6f8fa;
  --accent:#0b5cad; --ok:#1a7f37; --bad:#b42318; --warn:#9a6700; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, sans-serif; color:var(--fg); }
header { display:flex; gap:1.2em; align-items:center; padding:.6em 1.2em; background:var(--bg);
  border-bottom:1px solid var(--line); }
header strong { margin-right:1em; }
header nav a { margin-right:1em; }
header form { margin-left:auto; }
main { padding:1em 1.2em 3em; max-width:1200px; }
a { color:var(--accent); text-decoration:none; }
a:hover { text-decoration:underline; }
h1 { font-size:1.35em; margin:.3em 0 .6em; }
h2 { font-size:1.1em; margin:1.6em 0 .5em; border-bottom:1px solid var(--line); padding-bottom:.2em; }
table { border-collapse:collapse; width:100%; }
th, td { text-align:left; padding:.3em .6em; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:var(--bg); font-weight:600; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
code, pre, .mono { font-family:ui-monospace, SFMono-Regular, Menlo, monospace; font-size:12.5px; }
pre { background:var(--bg); padding:.5em; overflow:auto; max-height:24em; margin:.3em 0; }
.muted { color:var(--muted); }
.small { font-size:12px; }
.badge + .badge, td .badge { margin-left:.3em; }
.badge { display:inline-block; padding:0 .5em; border-radius:1em; font-size:12px; border:1px solid var(--line); }
.s-active, .s-connecting { color:var(--accent); border-color:var(--accent); }
.s-ended { color:var(--ok); border-color:var(--ok); }
.s-failed { color:var(--bad); border-color:var(--bad); }
.s-expired, .s-created, .s-revoked { color:var(--muted); }
form.inline { display:inline; }
form.stack { display:grid; gap:.5em; max-width:34em; }
form.row { display:flex; gap:.6em; align-items:end; flex-wrap:wrap; margin-bottom:1em; }
label { display:grid; gap:.15em; }
label.check { display:flex; gap:.4em; align-items:center; }
input[type=text], input[type=password], input[type=url], select, textarea { font:inherit; padding:.3em .4em;
  border:1px solid var(--line); border-radius:4px; }
button { font:inherit; padding:.3em .9em; border:1px solid var(--accent); background:var(--accent);
  color:#fff; border-radius:4px; cursor:pointer; }
button.plain { background:#fff; color:var(--accent); }
button.danger { background:#fff; color:var(--bad); border-color:var(--bad); }
.notice { padding:.6em .8em; border:1px solid var(--line); background:var(--bg); border-radius:4px; margin:.8em 0; }
.error { border-color:var(--bad); color:var(--bad); }
.secret { border-color:var(--warn); background:#fff8e1; }
.secret code { font-size:14px; word-break:break-all; }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:.25em 1.2em; margin:0; }
dl.facts dt { color:var(--muted); }
dl.facts dd { margin:0; }
mark.heard { background:#d7f5dd; }
s.cut { color:var(--bad); opacity:.65; }
span.unplayed { color:var(--muted); }
.said { margin:.3em 0; }
.who { display:inline-block; width:4.5em; color:var(--muted); }
.bar { display:flex; height:12px; min-width:2px; background:var(--bg); }
.bar span { height:12px; display:block; }
.seg-end-of-turn { background:#8fb8de; } .seg-to-brain { background:#c9b3e6; }
.seg-brain { background:#f2c078; } .seg-synthesis { background:#89d0a3; }
.seg-release { background:#b39ddb; }
.legend span { display:inline-block; width:.8em; height:.8em; margin:0 .2em 0 .8em; vertical-align:middle; }
details summary { cursor:pointer; }
.chips a { margin-right:.6em; }
.chips a.on { font-weight:600; color:var(--fg); }
ol.engines { margin:0; padding-left:1.3em; }
.k-local { color:var(--ok); border-color:var(--ok); }
.k-provider { color:var(--accent); border-color:var(--accent); }
.n-live { color:var(--ok); border-color:var(--ok); }
.n-stale { color:var(--bad); border-color:var(--bad); }
.n-draining { color:var(--warn); border-color:var(--warn); }
tr.unserved td { color:var(--muted); }
`;

export const Layout: FC<{ title: string; signedIn?: boolean; children?: Child }> = (
  { title, signedIn = true, children },
) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{title} · Console</title>
      <link rel="icon" href="data:," />
      <style>{raw(CSS)}</style>
      <script src={SCRIPT_PATH} defer></script>
    </head>
    <body>
      <header>
        <strong>Voice console</strong>
        {signedIn && (
          <nav>
            <a href="/console/agents">Agents</a>
            <a href="/console/sessions">Sessions</a>
            <a href="/console/languages">Languages</a>
            <a href="/console/phone">Phone numbers</a>
            <a href="/console/campaigns">Campaigns</a>
            <a href="/console/webhooks">Webhooks</a>
          </nav>
        )}
        {signedIn && (
          <form method="post" action="/console/sign-out">
            <button class="plain" type="submit">Sign out</button>
          </form>
        )}
      </header>
      <main>{children}</main>
    </body>
  </html>
);

export const Time: FC<{ at: Date | null | undefined }> = ({ at }) =>
  at ? <time datetime={at.toISOString()}>{formatTime(at)}</time> : <span class="muted">—</span>;

export const Status: FC<{ status: string; reason?: string | null }> = ({ status, reason }) => (
  <span>
    <span class={`badge s-${status}`}>{status}</span>
    {reason ? <span class="muted small">{` ${reason}`}</span> : ""}
  </span>
);

/** JSON behind a disclosure triangle. */
export const JsonDetails: FC<{ value: unknown; summary: string; open?: boolean }> = (
  { value, summary, open },
) => (
  <details open={open}>
    <summary>{summary}</summary>
    <pre>{JSON.stringify(value, null, 2)}</pre>
  </details>
);

/** A secret shown once, with a copy button (console.js; selecting the text works without it). */
export const ShownOnce: FC<{ id: string; label: string; value: string }> = (
  { id, label, value },
) => (
  <div class="notice secret" role="alert">
    <p>
      <strong>{label}</strong>: copy it now. It is stored only as a hash and will not be shown
      again.
    </p>
    <p>
      <code id={id} class="shown-once">{value}</code>{" "}
      <button type="button" class="plain" data-copy={id}>Copy</button>
    </p>
  </div>
);

export const ErrorNotice: FC<{ message?: string }> = ({ message }) =>
  message ? <p class="notice error" role="alert">{message}</p> : null;
