// The console plays a recording the worker wrote (its file:// URL) only from inside RECORDINGS_DIR,
// with ranges so the player seeks.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { encodeWav } from "../caller/wav.ts";
import { parseRange, resolveRecording } from "../api/console/recording.ts";
import { signIn } from "./helpers/console_client.ts";
import { seedSession } from "./helpers/sample_session.ts";
import { recordingUrl as toFileUrl } from "../media/call/recording.ts";

Deno.test("byte ranges: one range read, others sent whole or refused", () => {
  assertEquals(parseRange(undefined, 100), undefined);
  assertEquals(parseRange("bytes=0-9", 100), { start: 0, end: 9 });
  assertEquals(parseRange("bytes=90-", 100), { start: 90, end: 99 });
  assertEquals(parseRange("bytes=-10", 100), { start: 90, end: 99 });
  assertEquals(parseRange("bytes=50-500", 100), { start: 50, end: 99 });
  assertEquals(parseRange("bytes=100-", 100), null);
  assertEquals(parseRange("bytes=0-1,5-6", 100), undefined);
});

Deno.test("recording files resolve only inside the recordings folder", async () => {
  const root = await Deno.makeTempDir({ prefix: "console-rec-" });
  try {
    const dir = `${root}/recordings`;
    await Deno.mkdir(`${dir}/2025`, { recursive: true });
    await Deno.writeTextFile(`${dir}/2025/a.wav`, "RIFF");
    await Deno.writeTextFile(`${root}/secret.txt`, "outside");
    await Deno.symlink(`${root}/secret.txt`, `${dir}/link.wav`);
    await Deno.mkdir(`${root}/recordings-evil`);
    await Deno.writeTextFile(`${root}/recordings-evil/b.wav`, "RIFF");
    const real = await Deno.realPath(`${dir}/2025/a.wav`);
    assertEquals(await resolveRecording(toFileUrl(`${dir}/2025/a.wav`), dir), real);
    assertEquals(await resolveRecording(toFileUrl(`${dir}/../recordings/2025/a.wav`), dir), real);
    for (
      const url of [
        toFileUrl(`${root}/secret.txt`),
        `file://${dir}/../secret.txt`,
        toFileUrl(`${dir}/link.wav`), // a symlink pointing out
        toFileUrl(`${root}/recordings-evil/b.wav`), // a sibling sharing the prefix
        toFileUrl(`${dir}/2025`), // a folder
        toFileUrl(`${dir}/missing.wav`),
        "file://other-host/etc/passwd",
        `https://storage.example/${dir}/2025/a.wav`,
        "/etc/passwd",
        "file:///etc/passwd",
      ]
    ) {
      assertEquals(await resolveRecording(url, dir), undefined, url);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("console recording route", async (t) => {
  const root = await Deno.makeTempDir({ prefix: "console-rec-" });
  const dir = `${root}/recordings`;
  await Deno.mkdir(dir);
  const wav = encodeWav({ sampleRate: 16000, samples: new Int16Array(16000).fill(1000) });
  await Deno.writeFile(`${dir}/call.wav`, wav);
  await Deno.writeTextFile(`${root}/outside.wav`, "not for you");
  const api = await startTestApi({ RECORDINGS_DIR: dir });
  const op = await signIn(api);
  try {
    const acme = await makeTenant(api, "acme");
    const inside = await seedSession(api.db.sql, {
      ...acme,
      recording_url: toFileUrl(`${dir}/call.wav`),
    });

    await t.step("the session page plays a file:// recording through the console", async () => {
      const page = await op.get(`/console/sessions/${inside.session_id}`);
      assert(
        page.html.includes(
          `<audio id="recording" controls preload="metadata" src="/console/sessions/${inside.session_id}/recording">`,
        ),
      );
    });

    await t.step("a recording inside RECORDINGS_DIR is streamed, whole or by range", async () => {
      const whole = await op.get(`/console/sessions/${inside.session_id}/recording`);
      assertEquals(whole.status, 200);
      assertEquals(whole.headers.get("content-type"), "audio/wav");
      assertEquals(Number(whole.headers.get("content-length")), wav.length);
      const res = await fetch(api.url + `/console/sessions/${inside.session_id}/recording`, {
        headers: { cookie: op.cookie!, range: "bytes=0-3" },
      });
      assertEquals(res.status, 206);
      assertEquals(res.headers.get("content-range"), `bytes 0-3/${wav.length}`);
      assertEquals(new TextDecoder().decode(await res.arrayBuffer()), "RIFF");
    });

    await t.step("a recording URL outside RECORDINGS_DIR is refused", async () => {
      for (
        const url of [
          toFileUrl(`${root}/outside.wav`),
          `file://${dir}/../outside.wav`,
          "file:///etc/passwd",
        ]
      ) {
        const s = await seedSession(api.db.sql, { ...acme, recording_url: url });
        const r = await op.get(`/console/sessions/${s.session_id}/recording`);
        assertEquals(r.status, 404, url);
        assert(!r.html.includes("not for you") && !r.html.includes("root:"), url);
      }
    });

    await t.step("an http(s) recording is a link, and the route needs sign-in", async () => {
      const s = await seedSession(api.db.sql, {
        ...acme,
        recording_url: "https://storage.example/rec/1.wav",
      });
      const page = await op.get(`/console/sessions/${s.session_id}`);
      assert(page.html.includes(`href="https://storage.example/rec/1.wav"`));
      assert(!page.html.includes("<audio"));
      const anon = await fetch(api.url + `/console/sessions/${inside.session_id}/recording`, {
        redirect: "manual",
      });
      assertEquals(anon.status, 303);
      await anon.body?.cancel();
    });
  } finally {
    await api.close();
    await Deno.remove(root, { recursive: true });
  }
});
