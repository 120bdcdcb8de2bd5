"""Config checks and merging, as the worker applies them."""

import unittest

from voice_brain.config import ConfigError, apply_config, config_dict, config_message


class ConfigTest(unittest.TestCase):
    def test_names_and_camel_case_are_accepted(self):
        message = config_message({"tts": {"voice": "VOICE_ARJUN"}, "idle": {"timeoutMs": 5000}})
        self.assertEqual(config_dict(message),
                         {"tts": {"voice": "VOICE_ARJUN"}, "idle": {"timeout_ms": 5000}})

    def test_a_present_idle_section_without_a_timeout_is_zero(self):
        self.assertEqual(config_dict(config_message({"idle": {}})), {"idle": {"timeout_ms": 0}})

    def test_unknown_names_fields_types_and_ranges_are_errors(self):
        for bad in ({"tts": {"voice": "VOICE_NOPE"}}, {"stt": {"language": "LANGUAGE_XX"}},
                    {"tts": {"vioce": "x"}}, {"colour": 1}, {"idle": {"timeout_ms": 999}},
                    {"idle": {"timeout_ms": 3_600_001}}, {"idle": {"timeout_ms": -1}},
                    {"idle": {"timeout_ms": True}}, ["tts"], None):
            with self.assertRaises(ConfigError, msg=repr(bad)):
                config_message(bad)

    def test_apply_keeps_what_a_patch_leaves_out_and_sets_a_present_idle(self):
        base = {"tts": {"voice": "VOICE_ANANYA", "language": "LANGUAGE_EN"},
                "idle": {"timeout_ms": 5000}}
        patch = {"tts": {"language": "LANGUAGE_HI", "voice": "VOICE_UNSPECIFIED"},
                 "idle": {"timeout_ms": 0}}
        self.assertEqual(apply_config(base, patch), {
            "tts": {"voice": "VOICE_ANANYA", "language": "LANGUAGE_HI"},
            "idle": {"timeout_ms": 0},
        })
        self.assertEqual(base["tts"]["language"], "LANGUAGE_EN")  # not changed
        self.assertEqual(apply_config(base, {}), base)


if __name__ == "__main__":
    unittest.main()
