// The Python SDK's protobuf classes (sdk/python/voice_brain/proto/*_pb2.py) are checked in; an
// edit to a .proto here must come with them regenerated, or Python brains speak the old protocol.
import { assert } from "../tests/helpers/assert.ts";

const GEN = new URL("../sdk/python/gen_proto.py", import.meta.url).pathname;

Deno.test("the Python SDK's generated classes match the .proto files", async () => {
  const out = await new Deno.Command("/usr/bin/python3", {
    args: [GEN, "--check"],
    env: { PYTHONDONTWRITEBYTECODE: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const why = new TextDecoder().decode(out.stderr);
  assert(out.success, `regenerate with: python3 sdk/python/gen_proto.py\n${why}`);
});
