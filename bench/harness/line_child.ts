// A bench's helper process driven over stdio: JSON lines in on stdin, `<prefix> <json>` lines out
// on stdout (other stdout lines, e.g. library chatter, are ignored). Messages that arrive before
// anyone waits for them are kept, so a fast child cannot outrun the driver. The driver holds a
// LineChild; the child (e.g. bench/media/echo_callers.ts) reads its side with `childSide`.

export class LineChild {
  readonly child: Deno.ChildProcess;
  #prefix: string;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #waiting: { type: string; resolve: (m: Record<string, unknown>) => void }[] = [];
  #unclaimed: Record<string, unknown>[] = [];
  #stderr = "";
  #exited = false;

  /** Runs `deno run -A <script>` in `cwd`; messages are stdout lines starting `<prefix> `. */
  constructor(script: string, prefix: string, cwd?: string) {
    this.#prefix = `${prefix} `;
    this.child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", script],
      cwd,
      env: { NO_COLOR: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#read();
    const dec = new TextDecoder();
    this.child.stderr.pipeTo(
      new WritableStream({
        write: (c) => void (this.#stderr = (this.#stderr + dec.decode(c)).slice(-4000)),
      }),
    );
    this.child.status.then(() => (this.#exited = true));
  }

  get pid(): number {
    return this.child.pid;
  }

  send(line: string): void {
    this.#writer.write(new TextEncoder().encode(line + "\n")).catch(() => {});
  }

  /** The next message of this type, or an error with the child's stderr after `ms`. */
  wait(type: string, ms: number): Promise<Record<string, unknown>> {
    const i = this.#unclaimed.findIndex((m) => m.type === type);
    if (i >= 0) return Promise.resolve(this.#unclaimed.splice(i, 1)[0]);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const at = this.#waiting.findIndex((w) => w.resolve === done);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(new Error(`child: no ${type} within ${ms} ms; stderr:\n${this.#stderr}`));
      }, ms);
      const done = (m: Record<string, unknown>) => {
        clearTimeout(timer);
        resolve(m);
      };
      this.#waiting.push({ type, resolve: done });
    });
  }

  /** Closes stdin and waits for the exit (SIGKILL after 10 s). */
  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    if (!this.#exited) {
      const t = setTimeout(() => {
        try {
          this.child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 10_000);
      await this.child.status;
      clearTimeout(t);
    }
  }

  async #read(): Promise<void> {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of this.child.stdout) {
      buf += dec.decode(chunk, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.startsWith(this.#prefix)) continue;
        const msg = JSON.parse(line.slice(this.#prefix.length));
        const i = this.#waiting.findIndex((w) => w.type === msg.type);
        if (i >= 0) this.#waiting.splice(i, 1)[0].resolve(msg);
        else this.#unclaimed.push(msg);
      }
    }
  }
}

/** The lines of a stream (a helper process's stdin), without their newlines. */
export async function* streamLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      yield buf.slice(0, nl);
      buf = buf.slice(nl + 1);
    }
  }
}

/** The child's side: its configuration (the first stdin line, JSON), the rest of stdin, and `say`. */
export async function childSide<T>(prefix: string): Promise<{
  config: T;
  input: AsyncGenerator<string>;
  say: (msg: object) => void;
}> {
  const input = streamLines(Deno.stdin.readable);
  const first = await input.next();
  if (first.done) throw new Error("no config on stdin");
  return {
    config: JSON.parse(first.value) as T,
    input,
    say: (msg) => console.log(`${prefix} ${JSON.stringify(msg)}`),
  };
}
