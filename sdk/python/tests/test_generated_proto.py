"""The checked-in protobuf classes are what Debian's protoc makes from proto/ today."""

import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent.parent
GEN = HERE / "gen_proto.py"
CHECKED_IN = HERE / "voice_brain" / "proto"


def check(out: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(GEN), "--check", "--out", str(out)],
                          capture_output=True, text=True)


@unittest.skipUnless(shutil.which("protoc"), "protoc is missing: apt-get install protobuf-compiler")
class GeneratedProtoTest(unittest.TestCase):
    def test_checked_in_classes_match_a_fresh_protoc_run(self):
        result = check(CHECKED_IN)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_a_stale_class_file_is_caught(self):
        with tempfile.TemporaryDirectory() as tmp:
            for f in CHECKED_IN.glob("*_pb2.py"):
                shutil.copy(f, tmp)
            stale = pathlib.Path(tmp) / "brain_pb2.py"
            stale.write_text(stale.read_text().replace("voice.v1.UserTurn", "voice.v1.UserTurm"))
            result = check(pathlib.Path(tmp))
        self.assertEqual(result.returncode, 1)
        self.assertIn("brain_pb2.py is not what protoc makes of proto/", result.stderr)

    def test_every_message_of_the_protocol_is_generated(self):
        from voice_brain.proto import brain_pb2, config_pb2

        service = [f.name for f in brain_pb2.ServiceFrame.DESCRIPTOR.oneofs_by_name["frame"].fields]
        brain = [f.name for f in brain_pb2.BrainFrame.DESCRIPTOR.oneofs_by_name["frame"].fields]
        self.assertEqual(service, ["session_start", "user_turn", "client_message", "heard",
                                   "user_idle", "finalize", "end", "cancel", "dtmf",
                                   "transfer_failed", "say_started", "say_refused",
                                   "user_speech", "interim_text", "turn_metrics",
                                   "machine_detected", "beep", "turn_confirmed"])
        self.assertEqual(brain, ["greeting", "speech_unit", "action", "config", "end_session",
                                 "transfer", "say"])
        self.assertEqual(config_pb2.Voice.Name(2), "VOICE_ARJUN")


if __name__ == "__main__":
    unittest.main()
