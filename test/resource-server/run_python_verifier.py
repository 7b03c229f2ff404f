"""Test glue, not documentation: runs keygate_verifier.py on the tokens given as JSON on stdin."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from keygate_verifier import KeygateVerifier, PinnedKeygateVerifier  # noqa: E402

request = json.load(sys.stdin)
if "pinned" in request:
    verifier = PinnedKeygateVerifier(request["pinned"], algorithm=request["algorithm"])
else:
    verifier = KeygateVerifier(request["jwksUrl"], algorithm=request["algorithm"])
results = []
for token in request["tokens"]:
    claims = verifier.verify(token)
    results.append(None if claims is None else claims["sub"])
json.dump(results, sys.stdout)
