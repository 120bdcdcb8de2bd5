import assert from "node:assert/strict";
import { cutToLmWords, lmWordsDictionary } from "./lm_dictionary.ts";
import { enUsArgs, PsDecoder } from "./pocketsphinx_ffi.ts";
import { DEFAULT_VOCABULARY } from "./pocketsphinx.ts";
import { pocketsphinxOptions } from "../engines/registry.ts";
import { speech16k } from "../../tests/helpers/test_speech.ts";

Deno.test("the cut keeps every pronunciation of the LM's words and drops words it does not know", () => {
  const dict = [
    "hello HH AH L OW",
    "hello(2) HH EH L OW",
    "zzqxv Z K S",
    "kitchen K IH CH AH N",
    "",
  ].join("\n");
  assert.deepEqual(cutToLmWords(dict, enUsArgs().lm), [
    "hello HH AH L OW",
    "hello(2) HH EH L OW",
    "kitchen K IH CH AH N",
  ]);
});

Deno.test("the cut dictionary is derived once, then reused, and decodes as the full one does", async () => {
  const cache = await Deno.makeTempDir();
  try {
    const args = enUsArgs();
    const path = lmWordsDictionary(args.dict, args.lm, cache);
    const made = (await Deno.stat(path)).mtime!.getTime();
    assert.equal(lmWordsDictionary(args.dict, args.lm, cache), path);
    assert.equal((await Deno.stat(path)).mtime!.getTime(), made);
    assert.deepEqual([...Deno.readDirSync(cache)].map((e) => e.name), [path.split("/").pop()]);
    const full = (await Deno.readTextFile(args.dict)).split("\n").filter(Boolean).length;
    const cut = (await Deno.readTextFile(path)).split("\n").filter(Boolean).length;
    assert.ok(cut < full * 0.7, `${cut} of ${full} entries kept`);

    const pcm = await speech16k("please book a table for two at seven tonight");
    const decode = (dict: string) => {
      const d = new PsDecoder({ ...args, dict });
      try {
        d.start();
        d.process(pcm);
        d.end();
        return d.hyp();
      } finally {
        d.free();
      }
    };
    const text = decode(path);
    assert.ok(text.length > 0);
    assert.equal(text, decode(args.dict));
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("a vocabulary cut keeps the LM's most probable words and the words it is told to keep", () => {
  const dict = [
    "the DH AH",
    "the(2) DH IY",
    "of AH V",
    "lighthouse L AY T HH AW S",
    "kitchen K IH CH AH N",
    "mhm M HH M",
    "zzqxv Z K S",
  ].join("\n");
  const lm = enUsArgs().lm;
  assert.deepEqual(cutToLmWords(dict, lm, { vocabulary: 2 }), [
    "the DH AH",
    "the(2) DH IY",
    "of AH V",
  ]);
  assert.deepEqual(cutToLmWords(dict, lm, { vocabulary: 3 }).map((l) => l.split(" ")[0]), [
    "the",
    "the(2)",
    "of",
    "kitchen",
  ]);
  // Kept whatever their rank when the LM knows them; a word it does not know stays out.
  assert.deepEqual(
    cutToLmWords(dict, lm, { vocabulary: 2, keep: ["mhm", "zzqxv"] }).map((l) => l.split(" ")[0]),
    ["the", "the(2)", "of", "mhm"],
  );
});

Deno.test("the default vocabulary with the turn lexicon kept knows every lexicon word the LM knows", () => {
  const args = enUsArgs();
  const dictText = Deno.readTextFileSync(args.dict);
  const wordsOf = (lines: string[]) =>
    new Set(lines.map((l) => l.split(" ")[0].replace(/\(\d+\)$/, "")));
  const all = wordsOf(cutToLmWords(dictText, args.lm));
  const keep = pocketsphinxOptions({ options: {}, env: () => undefined }).keepWords!;
  const cut = wordsOf(cutToLmWords(dictText, args.lm, { vocabulary: DEFAULT_VOCABULARY, keep }));
  assert.ok(cut.size < all.size * 0.4, `${cut.size} of ${all.size} words kept`);
  const heard = keep.filter((w) => all.has(w));
  assert.ok(
    heard.includes("mhm") && heard.includes("uh"),
    "the lexicon's backchannels are LM words",
  );
  assert.deepEqual(heard.filter((w) => !cut.has(w)), []);
  // The speech config's own options come over the lexicon's.
  assert.deepEqual(
    pocketsphinxOptions({ options: { keepWords: [] }, env: () => undefined }).keepWords,
    [],
  );
});
