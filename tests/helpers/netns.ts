// A network namespace of the test's own, joined to the host by a veth pair on a private /30, for
// running a real browser behind a network the test shapes with iptables (UDP loss at a rate, UDP
// blocked). Rules are made inside the namespace only, so nothing else on the machine sees them.
// Needs root and `ip`/`iptables`; `available()` says whether this machine has them.

export interface Netns {
  name: string;
  /** The host's end of the veth pair: what services listen on for the namespace to reach. */
  hostIp: string;
  /** The namespace's end. */
  nsIp: string;
  /** Runs `iptables` inside the namespace. */
  iptables(...args: string[]): Promise<void>;
  /** A script that runs `program` inside the namespace with the arguments it is given. */
  wrapper(program: string): Promise<string>;
  close(): Promise<void>;
}

async function run(cmd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
}

export async function available(): Promise<boolean> {
  if (Deno.uid() !== 0) return false;
  try {
    await run("ip", "netns", "list");
    await run("iptables", "--version");
    return true;
  } catch {
    return false;
  }
}

export async function makeNetns(): Promise<Netns> {
  const id = crypto.getRandomValues(new Uint32Array(1))[0].toString(36).slice(0, 6);
  const name = `vcns${id}`;
  const hostIf = `vc${id}h`;
  const nsIf = `vc${id}n`;
  // 10.201.x.y/30, random so that parallel tests do not collide.
  const [a, b] = crypto.getRandomValues(new Uint8Array(2));
  const base = `10.201.${a}.${b & 0xfc}`;
  const hostIp = base.replace(/\d+$/, String((b & 0xfc) + 1));
  const nsIp = base.replace(/\d+$/, String((b & 0xfc) + 2));
  const made: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const undo of made.reverse()) await undo().catch(() => {});
  };
  try {
    await run("ip", "netns", "add", name);
    made.push(() => run("ip", "netns", "del", name));
    await run("ip", "link", "add", hostIf, "type", "veth", "peer", "name", nsIf);
    made.push(() => run("ip", "link", "del", hostIf));
    await run("ip", "link", "set", nsIf, "netns", name);
    await run("ip", "addr", "add", `${hostIp}/30`, "dev", hostIf);
    await run("ip", "link", "set", hostIf, "up");
    const inNs = (...args: string[]) => run("ip", "netns", "exec", name, ...args);
    await inNs("ip", "addr", "add", `${nsIp}/30`, "dev", nsIf);
    await inNs("ip", "link", "set", nsIf, "up");
    await inNs("ip", "link", "set", "lo", "up");
    const scripts: string[] = [];
    made.push(async () => {
      for (const s of scripts) await Deno.remove(s).catch(() => {});
    });
    return {
      name,
      hostIp,
      nsIp,
      iptables: (...args) => inNs("iptables", ...args),
      async wrapper(program) {
        const path = await Deno.makeTempFile({ prefix: `${name}-`, suffix: ".sh" });
        await Deno.writeTextFile(path, `#!/bin/sh\nexec ip netns exec ${name} ${program} "$@"\n`);
        await Deno.chmod(path, 0o755);
        scripts.push(path);
        return path;
      },
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
