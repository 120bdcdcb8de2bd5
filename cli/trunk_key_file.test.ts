// `deno task run`'s TRUNK_CREDENTIALS_KEY: made once, owner-only, the same on every later start.
import { assert, assertEquals } from "../tests/helpers/assert.ts";
import { importSealingKey } from "../common/sealed.ts";
import { TRUNK_KEY_FILE, trunkKeyOrCreate } from "./trunk_key_file.ts";

Deno.test("the run's trunk credentials key is made once, kept owner-only, and read back", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const first = await trunkKeyOrCreate(`${dir}/data`);
    await importSealingKey(first); // a usable key: base64 of 32 bytes
    assertEquals(await trunkKeyOrCreate(`${dir}/data`), first);
    const mode = (await Deno.stat(`${dir}/data/${TRUNK_KEY_FILE}`)).mode!;
    assertEquals(mode & 0o777, 0o600);
    const other = await Deno.makeTempDir();
    assert(await trunkKeyOrCreate(other) !== first, "each data folder has its own key");
    await Deno.remove(other, { recursive: true });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
