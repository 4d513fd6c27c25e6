"""Compiler backends with planted faults, registered with dynamo by name on import, so a corpus
run (and a repro pasted into a fresh interpreter that imports this module) can compile for them.

    writeback_planted_drop_clone  every `clone()` in the graph returns its source itself: a
                                  clone's output aliases its source (the dropped-clone fault)
    writeback_planted_stale       the second and later calls return the first call's values and
                                  run nothing (a fault that only the second call shows)
    writeback_planted_no_flip     refuses a graph that calls `flip` (a compile failure)

Each keeps dynamo's graph otherwise as it is and runs it as Python (no Inductor, no C++
compile), so a test of the corpus machinery takes seconds. `COMPILES` counts the graphs each
backend was given.
"""

from collections import Counter

import torch
from torch._dynamo import register_backend

DROP_CLONE = "writeback_planted_drop_clone"
STALE = "writeback_planted_stale"
NO_FLIP = "writeback_planted_no_flip"
COMPILES: Counter = Counter()


def drop_clones(graph: torch.fx.Graph) -> None:
    """The planted fault as a graph pass, looked up by name on every compile: a test switches
    it off as attribution switches off an Inductor pass (`attribution.Candidate`)."""
    for node in list(graph.nodes):
        if node.op == "call_method" and node.target == "clone" or node.target is torch.clone:
            node.replace_all_uses_with(node.args[0])
            graph.erase_node(node)


def _drop_clone(gm, example_inputs):
    COMPILES[DROP_CLONE] += 1
    drop_clones(gm.graph)
    gm.recompile()
    return gm.forward


def _stale(gm, example_inputs):
    COMPILES[STALE] += 1
    first = []

    def call(*args):
        if first:
            return [t.clone() for t in first[0]]
        out = gm.forward(*args)
        first.append([t.clone() for t in out])
        return out

    return call


def _no_flip(gm, example_inputs):
    COMPILES[NO_FLIP] += 1
    if any(node.target == "flip" or node.target is torch.flip for node in gm.graph.nodes):
        raise RuntimeError("planted: this backend cannot compile flip")
    return gm.forward


for _name, _fn in ((DROP_CLONE, _drop_clone), (STALE, _stale), (NO_FLIP, _no_flip)):
    register_backend(name=_name, compiler_fn=_fn)


def no_catalogue(patch) -> None:
    """A corpus run whose families match no catalogue control: none is judged for the match
    (its controls compiled for a planted or fake backend match nothing worth the minutes;
    tests/test_corpus.py matches a real family with its entry). `patch`: a pytest
    MonkeyPatch."""
    from benchmarks.corpus import catalogue

    patch.setattr(catalogue, "entries", lambda: [])
    patch.setattr(catalogue, "match", lambda found, backends, **_: None)
