import assert from "node:assert/strict";
import { cutToLmWords, lmWordsDictionary } from "./lm_dictionary.ts";
import { enUsArgs, PsDecoder } from "./pocketsphinx_ffi.ts";
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
