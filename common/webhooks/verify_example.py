# Verifying a webhook with Python's standard library alone, as docs/webhooks.md shows it
# (the standardwebhooks package on PyPI does the same; Debian packages none). Reads SECRET, BODY
# and HEADERS (JSON) from the environment; exits 0 when the signature holds, 1 when it does not.
import base64, hashlib, hmac, json, os, sys, time

def verify(secret: str, body: bytes, headers: dict) -> bool:
    msg_id = headers["webhook-id"]
    timestamp = headers["webhook-timestamp"]
    if abs(time.time() - int(timestamp)) > 5 * 60:
        return False  # too old or too new: a replay
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for candidate in headers["webhook-signature"].split(" "):
        version, _, signature = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return True
    return False

if __name__ == "__main__":
    ok = verify(os.environ["SECRET"], os.environ["BODY"].encode(), json.loads(os.environ["HEADERS"]))
    sys.exit(0 if ok else 1)
