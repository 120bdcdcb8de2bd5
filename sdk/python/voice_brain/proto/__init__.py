"""Protobuf classes generated from proto/voice/v1 by gen_proto.py (checked in; do not edit)."""
