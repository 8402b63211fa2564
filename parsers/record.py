"""`@record`: a class of named fields as `@dataclass` makes it -- `__init__` taking the fields
in order with their defaults, `__repr__`, `__eq__` (and `__hash__ = None`); `frozen=True`:
fields that cannot be assigned, and a hash of them -- for the classes every `mssdiag parse`
and `diff` loads.

Why not dataclasses: in Python 3.11 it imports inspect (ast, dis, tokenize: ~7 ms) and
compiles every generated method on its own (~0.6 ms a class): ~17 ms of a ~60 ms start
(docs/benchmarks.md). Here only `__init__` is written out and compiled (it runs for every
snapshot); repr, ==, hash and the frozen checks are shared functions that read FIELDS.

Only what those classes use: the class's own annotated fields (no inherited fields, no
ClassVar), plain defaults and `factory(list)` in place of `field(default_factory=list)`.
`dataclasses.fields()` does not know these classes: FIELDS holds their names in order.
tests/test_record.py holds each to what @dataclass would make of it.
"""
from __future__ import annotations

import _thread


class FrozenError(AttributeError):
    """Assignment to a field of a frozen record (dataclasses' FrozenInstanceError)."""


class factory:
    """A field's default made anew for each instance: `field(default_factory=make)`."""
    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


class _Factory:
    def __repr__(self) -> str:
        return "<factory>"         # as dataclasses shows it in the signature


_FACTORY = _Factory()
_repr_running: set = set()          # (record, thread) whose repr is being made


def record(cls=None, *, frozen: bool = False):
    """`@dataclass` / `@dataclass(frozen=True)` for a class of plain fields (module docstring)."""
    if cls is None:
        return lambda c: _make(c, frozen)
    return _make(cls, frozen)


def _values(obj) -> tuple:
    return tuple([getattr(obj, name) for name in obj.FIELDS])


def _repr(self) -> str:
    key = (id(self), _thread.get_ident())
    if key in _repr_running:                      # a record that holds itself
        return "..."
    _repr_running.add(key)
    try:
        return f"{self.__class__.__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.FIELDS)})"
    finally:
        _repr_running.discard(key)


def _eq(self, other):
    if other.__class__ is self.__class__:
        return _values(self) == _values(other)
    return NotImplemented


def _hash(self) -> int:
    return hash(_values(self))


def _frozen_setattr(self, name, value):
    if "FIELDS" in type(self).__dict__ or name in self.FIELDS:      # as dataclasses: a subclass may add others
        raise FrozenError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _frozen_delattr(self, name):
    if "FIELDS" in type(self).__dict__ or name in self.FIELDS:
        raise FrozenError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


def _make(cls, frozen: bool):
    if any("FIELDS" in vars(base) for base in cls.__mro__[1:]):
        raise TypeError(f"{cls.__qualname__}: a record's fields are its own (no record base class)")
    names = tuple(cls.__dict__.get("__annotations__", {}))
    env = {"_FACTORY": _FACTORY, "_object_setattr": object.__setattr__}
    params, body = [], []
    for name in names:
        if name not in cls.__dict__:
            params.append(name)
            value = name
        elif isinstance(cls.__dict__[name], factory):
            env[f"_make_{name}"] = cls.__dict__[name].make
            delattr(cls, name)                   # as dataclasses: no class attribute for a factory field
            params.append(f"{name}=_FACTORY")
            value = f"_make_{name}() if {name} is _FACTORY else {name}"
        else:
            env[f"_default_{name}"] = cls.__dict__[name]
            params.append(f"{name}=_default_{name}")
            value = name
        body.append(f" _object_setattr(self, {name!r}, {value})" if frozen else f" self.{name} = {value}")
    ns: dict = {}
    exec(f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or " pass"), env, ns)
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init
    cls.FIELDS = names
    cls.__match_args__ = names
    explicit_hash = cls.__dict__.get("__hash__") is not None
    for name, fn in (("__repr__", _repr), ("__eq__", _eq)):
        if name not in cls.__dict__:             # one the class writes itself wins, as with dataclasses
            setattr(cls, name, fn)
    if frozen:
        cls.__setattr__, cls.__delattr__ = _frozen_setattr, _frozen_delattr
        if not explicit_hash:
            cls.__hash__ = _hash
    elif not explicit_hash:
        cls.__hash__ = None                       # equal by value and mutable: not hashable (as dataclasses)
    return cls
