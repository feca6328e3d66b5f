import gc, types
# Switch off the tracer's audit hook, as an attacker would: what is left is the operating system's isolation.
import sys
tampered = False
_trace = sys.gettrace()
sys.settrace(None)  # the search below would take many thousand events
for _obj in gc.get_objects():
    if isinstance(_obj, types.FunctionType) and _obj.__name__ == "hook" and "_FORBIDDEN_EVENTS" in _obj.__globals__:
        _obj.__globals__["_FORBIDDEN_EVENTS"] = ("no.such.event",)
        for _cell in _obj.__closure__ or ():
            if isinstance(_cell.cell_contents, str):
                _cell.cell_contents = ""
        tampered = True
sys.settrace(_trace)
del _obj, _trace
import os, sys, threading
results = {}


def write(name, path):
    try:
        with open(path, "w") as fh:
            fh.write("x")
        results[name] = "written"
    except OSError as exc:
        results[name] = type(exc).__name__


workers = [threading.Thread(target=write, args=("outside", os.path.join(sys.argv[1], "leak"))),
           threading.Thread(target=write, args=("tmp", "/tmp/ndb-hostile-thread")),
           threading.Thread(target=write, args=("inside", "mine.txt"))]
for t in workers:
    t.start()
for t in workers:
    t.join()
outcome = sorted(results.items())
