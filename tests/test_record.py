"""parsers/record.py: each class it makes behaves as @dataclass would make it (the same
__init__ signature and defaults, repr, ==, hashing, frozen fields, pickling), checked against
a dataclass built from the same fields; and the parsers are found without pkgutil as pkgutil
finds them."""
from __future__ import annotations

import dataclasses
import inspect
import pickle
import pkgutil

import pytest

import parsers
from parsers import model, text
from parsers.record import FrozenError, factory, record
from toolkit import capture, diff, hostfile, hosts, inputs, tally

CLASSES = [model.Meta, model.Reading, model.Snapshot, text.Stamp, text.Chunk, text.Origin, hostfile.HostFacts,
           hosts.Host, hosts.Input, hosts.Verdict, inputs.Outcome, capture.Result, diff.Delta, tally.Period,
           tally.Tally]


def frozen(cls) -> bool:
    return cls.__setattr__ is not object.__setattr__


def reference(cls):
    """The dataclass @dataclass would make of cls's fields and defaults."""
    specs = []
    for p in list(inspect.signature(cls).parameters.values()):
        if p.default is inspect.Parameter.empty:
            specs.append((p.name, object))
        elif repr(p.default) == "<factory>":
            specs.append((p.name, object, dataclasses.field(default_factory=cls.__init__.__globals__[f"_make_{p.name}"])))
        else:
            specs.append((p.name, object, dataclasses.field(default=p.default)))
    own = {k: v for k, v in vars(cls).items() if k in ("__repr__", "__eq__") and v.__module__ == cls.__module__
           and not v.__module__.startswith("parsers.record")}
    ref = dataclasses.make_dataclass(cls.__name__, specs, frozen=frozen(cls), namespace=own)
    ref.__qualname__ = cls.__qualname__
    return ref


def arguments(cls):
    return [f"value {i}" for i, p in enumerate(inspect.signature(cls).parameters.values())
            if p.default is inspect.Parameter.empty]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_a_record_is_what_dataclass_makes(cls):
    ref = reference(cls)
    assert cls.FIELDS == tuple(f.name for f in dataclasses.fields(ref)) == cls.__match_args__
    sig = lambda c: [(p.name, p.kind, repr(p.default)) for p in inspect.signature(c).parameters.values()]  # noqa: E731
    assert sig(cls) == sig(ref)
    args = arguments(cls)
    a, b, r = cls(*args), cls(*args), ref(*args)
    assert {n: getattr(a, n) for n in cls.FIELDS} == {n: getattr(r, n) for n in cls.FIELDS}
    for name in cls.FIELDS:                               # a default made by a factory: one per instance
        if isinstance(getattr(a, name), (list, dict, set)):
            assert getattr(a, name) is not getattr(b, name)
        assert name not in vars(cls) or not isinstance(vars(cls)[name], factory)
    assert repr(a) == repr(r)
    assert a == b and not a != b and (r == ref(*args))
    assert a.__eq__(object()) is NotImplemented and r.__eq__(object()) is NotImplemented
    last = cls.FIELDS[-1]                                 # the last field changed: not equal
    if inspect.signature(cls).parameters[last].default is inspect.Parameter.empty:
        other, ref_other = cls(*args[:-1], "other"), ref(*args[:-1], "other")
    else:
        other, ref_other = cls(*args, **{last: "other"}), ref(*args, **{last: "other"})
    assert a != other and r != ref_other
    assert pickle.loads(pickle.dumps(a)) == a
    if frozen(cls):
        assert hash(a) == hash(r) == hash(b)
        for obj in (a, r):
            with pytest.raises(AttributeError):
                setattr(obj, cls.FIELDS[0], "x")
            with pytest.raises(AttributeError):
                obj.new_attribute = 1
            with pytest.raises(AttributeError):
                delattr(obj, cls.FIELDS[0])
        with pytest.raises(FrozenError):
            setattr(a, cls.FIELDS[0], "x")
    else:
        assert cls.__hash__ is None and ref.__hash__ is None
        setattr(a, cls.FIELDS[0], "x")
        assert getattr(a, cls.FIELDS[0]) == "x" and a != b


def test_a_record_that_holds_itself_is_shown_as_dataclass_shows_it():
    @record
    class Node:
        name: str
        children: list = factory(list)

    Ref = dataclasses.make_dataclass("Node", [("name", object), ("children", object, dataclasses.field(default_factory=list))])
    Ref.__qualname__ = Node.__qualname__
    n, r = Node("a"), Ref("a")
    n.children.append(n)
    r.children.append(r)
    assert repr(n) == repr(r) == f"{Node.__qualname__}(name='a', children=[...])"


def test_the_parsers_are_found_as_pkgutil_finds_them():
    assert parsers._modules() == sorted(i.name for i in pkgutil.iter_modules(parsers.__path__))
    assert {"linux", "windows", "vos"} <= set(parsers.REGISTRY)
