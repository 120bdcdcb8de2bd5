// Redaction (issue 37): what redacting one turn's text costs the worker, against copying it, in
// the same run. Run: deno task bench redaction (~10 s).
//
// Texts: turns as a recogniser or a typed page writes them, in English and Hindi, plain and with
// what redaction takes (cards, phones, e-mails, spoken digits). Each is redacted with every
// category on (the worst case: every pattern runs), and with none (what an agent that does not
// redact pays: nothing but a size check). Baselines: copying the text character by character,
// and JSON-serialising it (what writing it to the session log already costs).
import { NO_REDACTION, redact, REDACT_ALL, redactDeep } from "../common/redaction.ts";

const TURNS = [
  "hello, I would like to check the status of my order please",
  "yes that's right, the delivery was supposed to come yesterday between ten and twelve",
  "my card is 4532 0151 1283 0366 and the expiry is twelve twenty eight",
  "you can call me back on +91 98765 43210 or mail ravi.k@example.com",
  "it's nine eight seven six five four three two one zero",
  "my email is john dot smith at gmail dot com",
  "मेरा नंबर नौ आठ सात छह पांच चार तीन दो एक शून्य है",
  "मुझे अपने खाते की जानकारी चाहिए, कृपया मदद कीजिए",
  "the amount was ₹1,50,000 on 2024-05-12 at 10:30, order ORD-123456789012",
  "ok",
];
const ROUNDS = 2000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let sink = 0;

/** µs per turn of `f`, the median of seven passes over every text ROUNDS times. */
function perTurn(f: (text: string) => string): number {
  for (let i = 0; i < 200; i++) for (const t of TURNS) sink += f(t).length; // warm the JIT
  const runs: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now();
    for (let i = 0; i < ROUNDS; i++) for (const t of TURNS) sink += f(t).length;
    runs.push((performance.now() - t0) * 1000 / (ROUNDS * TURNS.length));
  }
  return median(runs);
}

const copy = perTurn((t) => [...t].join(""));
const json = perTurn((t) => JSON.stringify({ text: t }));
const none = perTurn((t) => redact(t, NO_REDACTION));
const all = perTurn((t) => redact(t, REDACT_ALL));
const entry = perTurn((t) => JSON.stringify(redactDeep({ text: t, typed: true }, REDACT_ALL)));
const chars = TURNS.reduce((s, t) => s + t.length, 0) / TURNS.length;

console.log(
  `## redaction per turn of text (${TURNS.length} turns, ${chars.toFixed(0)} chars mean)`,
);
console.log("what | µs per turn (median of 7) | × copying");
const row = (what: string, us: number) =>
  console.log(`${what} | ${us.toFixed(2)} | ${(us / copy).toFixed(2)}`);
row("baseline: copy the text", copy);
row("baseline: JSON-serialise it as a log entry", json);
row("redact, no category (an agent that does not redact)", none);
row("redact, every category", all);
row("redact a log entry and serialise it, every category", entry);
if (sink === 0) console.log(""); // keeps the work from being optimised away
