// A keypad example: a bank line that takes an account number ending in hash, then a four-digit PIN
// as a sensitive collection, and checks them. The same flow as sdk/python/example/keypad.py.
//
//   deno run -A sdk/brain/example/keypad.ts   # ws://127.0.0.1:8790/brain (BRAIN_PORT, HOST)
//
// Give the URL as the brain_url of an agent with a phone number, ring it and key in 12345678 #
// then 4321. It logs what step it is on, never a digit: a PIN or account number in a log is a leak.
import { type Brain, createBrain, type Session } from "../mod.ts";

/** Stands in for the bank's own look-up; a real brain asks its back end. */
const ACCOUNTS = new Map([["12345678", "4321"]]);
const TRIES = 2;

/** Compares without stopping at the first difference, so the time taken tells nothing. */
function sameDigits(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  }
  return diff === 0;
}

async function goodbye(session: Session, text: string): Promise<void> {
  await session.say(text);
  session.end("keypad_flow_done");
}

async function bank(session: Session, log: (line: string) => void): Promise<void> {
  let account: string | undefined;
  for (let i = 0; i < TRIES && account === undefined; i++) {
    log("collecting the account number");
    const got = await session.collectDigits({
      prompt: "Please key in your account number, then press hash.",
      maxDigits: 12,
      terminator: "#",
      digitTimeoutMs: 6000,
      totalTimeoutMs: 40_000,
    });
    if (got.reason === "ended") return;
    if (got.reason === "terminator" && got.digits.length >= 6) account = got.digits;
    else await session.say("Sorry, I did not get that.");
  }
  if (account === undefined) {
    return goodbye(session, "Please call again when you have your account number.");
  }

  log("collecting the PIN");
  const pin = await session.collectDigits({
    prompt: "Now key in your four digit PIN.",
    maxDigits: 4,
    digitTimeoutMs: 6000,
    sensitive: true,
  });
  if (pin.reason === "ended") return;
  const ending = account.slice(-4).split("").join(" ");
  if (pin.reason === "max_digits" && sameDigits(ACCOUNTS.get(account) ?? "", pin.digits)) {
    log("PIN accepted");
    await goodbye(session, `Thank you. Account ending ${ending} is verified. Goodbye.`);
  } else {
    log(`PIN not accepted (${pin.reason})`);
    await goodbye(session, `That PIN does not match account ending ${ending}. Goodbye.`);
  }
}

/** Builds the keypad example brain; `log` gets each step (never a digit). */
export function createKeypadBrain(log: (line: string) => void = console.log): Brain {
  const started = new WeakSet<Session>();
  return createBrain({
    onSessionStart: () => "Welcome to the city bank.",
    onTurn: () => {}, // the keys lead this call; what the caller says waits for the prompts
    onHeard(heard, session) {
      // The greeting has played out: the floor is free for the first prompt.
      if (heard.turnId !== "greeting" || started.has(session)) return;
      started.add(session);
      void bank(session, log);
    },
  });
}

if (import.meta.main) {
  const served = createKeypadBrain().serve({
    hostname: Deno.env.get("HOST") ?? "127.0.0.1",
    port: Number(Deno.env.get("BRAIN_PORT") ?? 8790),
    path: "/brain",
  });
  console.log(`brain listening on ${served.url}`);
}
