// Loads the wire protocol with protobufjs. The only module that knows the .proto files;
// everything else asks it for reflected types.
import protobuf from "protobufjs";

const ROOT_DIR = new URL("./", import.meta.url);
const FILES = ["voice/v1/config.proto", "voice/v1/brain.proto"];

function loadRoot(): protobuf.Root {
  const root = new protobuf.Root();
  // Resolve imports like "voice/v1/config.proto" against this folder.
  root.resolvePath = (_origin, target) => new URL(target, ROOT_DIR).pathname;
  root.loadSync(FILES.map((f) => new URL(f, ROOT_DIR).pathname), { keepCase: true });
  root.resolveAll();
  return root;
}

export const protoRoot: protobuf.Root = loadRoot();

export const ConfigType: protobuf.Type = protoRoot.lookupType("voice.v1.Config");
export const ServiceFrameType: protobuf.Type = protoRoot.lookupType("voice.v1.ServiceFrame");
export const BrainFrameType: protobuf.Type = protoRoot.lookupType("voice.v1.BrainFrame");

/** The names of an enum other than its zero value. */
export function enumNames(e: protobuf.Enum): string[] {
  return Object.entries(e.values).filter(([, v]) => v !== 0).map(([k]) => k);
}
