// `deno task run --help`: what the command does and the variables a laptop run reads. Any other
// argument is refused (the run takes its settings from the environment only), so a mistyped
// flag is not silently ignored while the service starts.

export const RUN_HELP =
  `deno task run: the whole voice call service on this machine (database, API with the
console, one media worker, the example brain, the demo page); prints the URL to open.

Usage: deno task run            start it (Ctrl-C stops it)
       deno task run --help     this text

Settings come from the environment:
  DATA_DIR           data folder (default ./data): the embedded database, recordings, the demo
                     key; one run at a time per folder
  DATABASE_URL       PostgreSQL instead of the embedded database
  HOST               the address every listener binds: 127.0.0.1 (default, this machine only);
                     0.0.0.0 opens the run to the network and announces this machine's address
  API_PORT           API, console and demo page (default 8787)
  WORKER_PORT        the media worker's HTTP (default 8788)
  BRAIN_PORT         the example brain, on 127.0.0.1 only (default 8790)
  SIP_REDIRECT_PORT  SIP redirect for trunks, UDP and TCP (default 5080, another if taken)
  SIP_PORT           the worker's SIP, UDP and TCP (default 5070, another if taken)
  RTC_PORTS          UDP/TCP range of WebRTC media ports, e.g. 50000-50199 (default: any)
  RTP_PORTS          UDP range of phone calls' RTP ports, e.g. 40000-40999 (default: any)
  ADMIN_TOKEN        the admin token (default: made once and kept in the database)

README.md ("Configuration") lists every variable.`;

/** What the arguments ask for: `help`, or `start`; throws on anything else. */
export function runCommand(args: string[]): "help" | "start" {
  if (args.length === 0) return "start";
  if (args.length === 1 && (args[0] === "--help" || args[0] === "-h")) return "help";
  throw new Error(
    `takes no arguments (settings come from the environment), not ${
      args.map((a) => JSON.stringify(a)).join(" ")
    }; see deno task run --help`,
  );
}
