"""torch.export's serialized pytree specs (treespec_dumps, protocol 1): flattening a call's (args, kwargs) into the
program's inputs and rebuilding its result, on any torch (1.13 has no treespec_loads). Containers are tuples, lists,
dicts and OrderedDicts; other node types are left to torch's own pytree where it can read them."""

import collections
import json
from typing import Any, List, Optional

from ._library import KilnError


class Spec:
    """One node: `type` (None for a leaf), its `context` (JSON text) and children."""

    def __init__(self, type_name: Optional[str], context: Any, children: List["Spec"]):
        self.type = type_name
        self.context = context
        self.children = children

    @property
    def num_leaves(self) -> int:
        return 1 if self.type is None else sum(c.num_leaves for c in self.children)

    def keys(self) -> list:
        return json.loads(self.context) if self.context else []


def _node(d: Any, where: str) -> Spec:
    if not isinstance(d, dict) or not isinstance(d.get("children_spec"), list):
        raise KilnError("[InvalidInput] malformed pytree spec at " + where)
    return Spec(d.get("type"), d.get("context"), [_node(c, where + "." + str(i)) for i, c in enumerate(d["children_spec"])])


def parse(text: str) -> Optional[Spec]:
    """The spec in `text`, or None for "" (a module without one)."""
    if not text:
        return None
    try:
        protocol, root = json.loads(text)
    except (ValueError, TypeError):
        raise KilnError("[InvalidInput] malformed pytree spec: " + text[:80]) from None
    if protocol != 1:
        raise KilnError("[Unsupported] pytree spec protocol %r (Kiln reads 1)" % (protocol,))
    return _node(root, "root")


_SEQUENCES = ("builtins.tuple", "builtins.list", "torch.fx.immutable_collections.immutable_list",
              "collections.namedtuple")
_MAPPINGS = ("builtins.dict", "collections.OrderedDict", "torch.fx.immutable_collections.immutable_dict")


def flatten(value: Any, spec: Spec, where: str = "input") -> list:
    """The leaves of `value` in the order `spec` gives them (dict entries in the spec's key order)."""
    if spec.type is None:
        return [value]
    if spec.type in _SEQUENCES:
        if not isinstance(value, (tuple, list)) or len(value) != len(spec.children):
            raise KilnError("[InvalidInput] %s: expected a sequence of %d, got %s" %
                            (where, len(spec.children), _describe(value)))
        return [leaf for i, (v, c) in enumerate(zip(value, spec.children)) for leaf in flatten(v, c, "%s[%d]" % (where, i))]
    if spec.type in _MAPPINGS:
        keys = spec.keys()
        if not isinstance(value, dict) or set(value) != set(keys):
            got = sorted(map(str, value)) if isinstance(value, dict) else _describe(value)
            raise KilnError("[InvalidInput] %s: expected keys %s, got %s" % (where, sorted(map(str, keys)), got))
        return [leaf for k, c in zip(keys, spec.children) for leaf in flatten(value[k], c, "%s[%r]" % (where, k))]
    raise KilnError("[Unsupported] %s: pytree node type %s" % (where, spec.type))


def unflatten(leaves: list, spec: Spec) -> Any:
    """Rebuilds the structure `spec` describes from `leaves` (a namedtuple comes back as a tuple)."""
    it = iter(leaves)
    result = _build(it, spec)
    return result


def _build(it, spec: Spec) -> Any:
    if spec.type is None:
        return next(it)
    children = [_build(it, c) for c in spec.children]
    if spec.type in ("builtins.tuple", "collections.namedtuple"):
        return tuple(children)
    if spec.type in _SEQUENCES:
        return children
    if spec.type == "collections.OrderedDict":
        return collections.OrderedDict(zip(spec.keys(), children))
    if spec.type in _MAPPINGS:
        return dict(zip(spec.keys(), children))
    raise KilnError("[Unsupported] pytree node type %s in the program's outputs" % spec.type)


def _describe(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return "%s of %d" % (type(value).__name__, len(value))
    return type(value).__name__
