"""tools.check with a stand-in for the proposed shim: on a build whose profiler shows neither
'## Call CompiledFxGraph' nor 'Torch-Compiled Region' (2.1.0), count 'TorchDynamo Cache Lookup'."""
import sys
from benchmarks.probes import runtime
LOOKUP = "TorchDynamo Cache Lookup"
_original = runtime.entrypoint_event
def entrypoint_event(names):
    try:
        return _original(names)
    except RuntimeError:
        if any(n.startswith(LOOKUP) for n in names):
            return LOOKUP
        raise
runtime.entrypoint_event = entrypoint_event
from tools import check
sys.exit(check.main(sys.argv[1:]))
