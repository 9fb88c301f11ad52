"""Protobuf request bodies (`application/vnd.kubernetes.protobuf`), as kubectl's typed clients
send them (`kubectl create namespace|priorityclass|pdb|deployment`, the DeleteOptions of
`kubectl drain --disable-eviction`): decoded, table-driven, into the JSON object the same
request would carry as JSON, which then takes the JSON write path. Responses stay JSON.

- `decode.decode_body(raw) -> dict`: envelope (`k8s\\x00` + runtime.Unknown) and object; raises
  `reader.ProtobufError` (a `NotRegisteredError` for kinds the schema lacks) with a precise message.
- `schema.load()`: the schema table (`schema.json`, generated from upstream's Go types by
  scripts/gen_proto_schema.py) of the served kinds, Eviction and DeleteOptions.
- `reader`: the wire format (varints, fixed32/64, length-delimited, packed, groups skipped).
"""

from kubetaint.apiserver.protobuf.decode import MEDIA_TYPE, NotRegisteredError, decode_body
from kubetaint.apiserver.protobuf.reader import ProtobufError

__all__ = ["MEDIA_TYPE", "NotRegisteredError", "ProtobufError", "decode_body"]
