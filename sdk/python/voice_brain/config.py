"""The brain's Config, checked against the generated proto before it goes on the wire.

A misspelt voice or field is an error here (``ConfigError``), never silently dropped: a brain that
misspells a voice would otherwise speak with the old one.
"""

import copy
from typing import Any, Dict

from google.protobuf import json_format

from .proto import config_pb2

IDLE_MIN_MS = 1000
IDLE_MAX_MS = 3_600_000

ConfigDict = Dict[str, Any]
"""A ``voice.v1.Config`` as proto3 JSON with enum names, e.g.
``{"tts": {"voice": "VOICE_ARJUN", "language": "LANGUAGE_HI"}, "idle": {"timeout_ms": 5000}}``."""


class ConfigError(ValueError):
    """A config names an unknown field or enum value, or a number out of range. Nothing was sent."""


def _enum_names(enum) -> str:
    return ", ".join(v.name for v in enum.DESCRIPTOR.values if v.number != 0)


def config_message(config: ConfigDict) -> config_pb2.Config:
    """Checks ``config`` (proto3 JSON, enum names) and returns the ``voice.v1.Config`` message.

    Raises:
        ConfigError: naming the field, for an unknown field or enum name, a wrong type, or an
            idle timeout other than 0 or 1000 to 3600000 ms.
    """
    if not isinstance(config, dict):
        raise ConfigError(f"config: expected a dict, got {config!r}")
    message = config_pb2.Config()
    try:
        json_format.ParseDict(config, message)
    except json_format.ParseError as err:
        hint = ""
        if "voice.v1.Voice" in str(err):
            hint = f"; expected one of {_enum_names(config_pb2.Voice)}"
        elif "voice.v1.Language" in str(err):
            hint = f"; expected one of {_enum_names(config_pb2.Language)}"
        raise ConfigError(f"config: {err}{hint}") from None
    timeout = message.idle.timeout_ms
    if message.HasField("idle") and timeout != 0 and not IDLE_MIN_MS <= timeout <= IDLE_MAX_MS:
        raise ConfigError(
            f"config idle.timeout_ms: {timeout} is out of range; "
            f"use 0 (idle off) or {IDLE_MIN_MS} to {IDLE_MAX_MS}"
        )
    return message


def config_dict(message: config_pb2.Config) -> ConfigDict:
    """A Config message as proto3 JSON with enum names, zero fields left out."""
    out = json_format.MessageToDict(message, preserving_proto_field_name=True)
    # A present idle section with no field is a timeout of 0 (proto3 drops zero scalars).
    if "idle" in out:
        out["idle"].setdefault("timeout_ms", 0)
    return out


def apply_config(base: ConfigDict, patch: ConfigDict) -> ConfigDict:
    """``base`` with ``patch`` applied as the worker applies it: zero or absent enums keep what is
    in effect, a present idle or events section sets its fields. Neither argument is changed."""
    out = copy.deepcopy(base)

    def given(v: Any) -> bool:
        return isinstance(v, str) and v != "" and not v.endswith("_UNSPECIFIED")

    for section, key in (("tts", "voice"), ("tts", "language"), ("stt", "language")):
        value = (patch.get(section) or {}).get(key)
        if given(value):
            out.setdefault(section, {})[key] = value
    if "idle" in patch:
        out["idle"] = {"timeout_ms": (patch.get("idle") or {}).get("timeout_ms", 0)}
    if "events" in patch:
        # Like idle: a present section sets every flag (proto3 cannot tell false from absent).
        events = patch.get("events") or {}
        out["events"] = {k: bool(events.get(k, False))
                         for k in ("speech", "interim_text", "turn_metrics")}
    if "keypad" in patch:
        out["keypad"] = {"sensitive": (patch.get("keypad") or {}).get("sensitive") is True}
    if "turns" in patch:
        out["turns"] = {"speculative": (patch.get("turns") or {}).get("speculative") is True}
    return out
