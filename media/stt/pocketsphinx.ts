// The local recognition engine: Debian's pocketsphinx with the en-us model, in its own thread
// (pocketsphinx_worker.ts). English only.
import {
  type RecognitionEngine,
  type RecognitionResult,
  type RecognitionStream,
  UnservedLanguageError,
} from "./engine.ts";
import type { FromRecogniser, ToRecogniser } from "./pocketsphinx_protocol.ts";

const LANGUAGES = ["LANGUAGE_EN"] as const;

interface Pending {
  resolve: (r: RecognitionResult) => void;
  reject: (e: Error) => void;
  audioMs: number;
}

class PocketsphinxStream implements RecognitionStream {
  listeners: ((text: string) => void)[] = [];
  pending = new Map<number, Pending>();
  private seq = 0;
  private samples = 0;
  closed = false;

  constructor(private engine: PocketsphinxEngine, readonly id: number) {}

  push(pcm16k: Int16Array): void {
    if (this.closed || pcm16k.length === 0) return;
    const copy = pcm16k.slice();
    this.samples += copy.length;
    this.engine.send({ op: "push", id: this.id, pcm: copy }, [copy.buffer]);
  }

  onInterim(listener: (text: string) => void): void {
    this.listeners.push(listener);
  }

  finish(): Promise<RecognitionResult> {
    if (this.closed) return Promise.reject(new Error("recognition stream is closed"));
    const seq = ++this.seq;
    const audioMs = this.samples / 16;
    this.samples = 0;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject, audioMs });
      this.engine.send({ op: "finish", id: this.id, seq });
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.engine.send({ op: "close", id: this.id });
    this.engine.forget(this.id);
    for (const p of this.pending.values()) p.reject(new Error("recognition stream closed"));
    this.pending.clear();
  }
}

export class PocketsphinxEngine implements RecognitionEngine {
  readonly name = "pocketsphinx";
  readonly languages: readonly string[] = LANGUAGES;
  private worker: Worker;
  private streams = new Map<number, PocketsphinxStream>();
  private opening = new Map<number, (ok: boolean, message?: string) => void>();
  private nextId = 1;
  private dead?: Error;

  private constructor() {
    this.worker = new Worker(new URL("./pocketsphinx_worker.ts", import.meta.url), {
      type: "module",
    });
  }

  /** Starts the thread and waits until a decoder is ready (the model is loaded). */
  static async create(): Promise<PocketsphinxEngine> {
    const engine = new PocketsphinxEngine();
    await new Promise<void>((resolve, reject) => {
      engine.worker.onmessage = (ev: MessageEvent<FromRecogniser>) => {
        if (ev.data.op === "ready") resolve();
        else if (ev.data.op === "error") reject(new Error(ev.data.message));
      };
      engine.worker.onerror = (ev) => {
        ev.preventDefault();
        reject(new Error(ev.message));
      };
      engine.send({ op: "start" });
    }).catch((err) => {
      engine.worker.terminate();
      throw err;
    });
    engine.worker.onmessage = (ev) => engine.receive(ev.data);
    engine.worker.onerror = (ev) => {
      ev.preventDefault();
      engine.fail(new Error(`recognition thread crashed: ${ev.message}`));
    };
    return engine;
  }

  send(m: ToRecogniser, transfer: Transferable[] = []): void {
    if (!this.dead) this.worker.postMessage(m, transfer);
  }

  forget(id: number): void {
    this.streams.delete(id);
  }

  open(language: string): Promise<RecognitionStream> {
    if (!this.languages.includes(language)) {
      return Promise.reject(new UnservedLanguageError(language, this.name, this.languages));
    }
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    const stream = new PocketsphinxStream(this, id);
    this.streams.set(id, stream);
    return new Promise((resolve, reject) => {
      this.opening.set(id, (ok, message) => ok ? resolve(stream) : reject(new Error(message)));
      this.send({ op: "open", id });
    });
  }

  private receive(m: FromRecogniser): void {
    switch (m.op) {
      case "opened":
        this.opening.get(m.id)?.(true);
        this.opening.delete(m.id);
        break;
      case "interim": {
        const s = this.streams.get(m.id);
        if (s && m.text) { for (const l of s.listeners) l(m.text); }
        break;
      }
      case "final": {
        const s = this.streams.get(m.id);
        const p = s?.pending.get(m.seq);
        if (!s || !p) return;
        s.pending.delete(m.seq);
        p.resolve({ text: m.text, audioMs: p.audioMs });
        break;
      }
      case "error": {
        if (m.id !== undefined && this.opening.has(m.id)) {
          this.opening.get(m.id)!(false, m.message);
          this.opening.delete(m.id);
          this.streams.delete(m.id);
        } else if (m.id !== undefined) {
          const s = this.streams.get(m.id);
          for (const p of s?.pending.values() ?? []) p.reject(new Error(m.message));
          s?.pending.clear();
        }
        break;
      }
    }
  }

  private fail(err: Error): void {
    this.dead = err;
    for (const done of this.opening.values()) done(false, err.message);
    this.opening.clear();
    for (const s of this.streams.values()) {
      for (const p of s.pending.values()) p.reject(err);
      s.pending.clear();
    }
  }

  close(): Promise<void> {
    this.fail(new Error("recognition engine closed"));
    for (const s of [...this.streams.values()]) s.closed = true;
    this.streams.clear();
    this.worker.terminate();
    return Promise.resolve();
  }
}
