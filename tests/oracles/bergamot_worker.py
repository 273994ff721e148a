"""Runs inside the bergamot venv (Python 3.10), never imported by the tests: loads the wheel's native module
directly (the package's __init__ fetches a model index from the network), translates, prints JSON.

stdin: {"module": path of _bergamot*.so, "config": marian YAML, "lines": [...], "per_line": bool}
stdout: {"results": [{"text": str, "sentences": [[token surface, ...], ...]}, ...]}
A model bergamot cannot load aborts this process; the caller reports that.
"""

import importlib.machinery
import importlib.util
import json
import sys


def load(path):
    loader = importlib.machinery.ExtensionFileLoader("bergamot._bergamot", path)
    spec = importlib.util.spec_from_file_location("bergamot._bergamot", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def main():
    request = json.load(sys.stdin)
    native = load(request["module"])
    service = native.Service(native.ServiceConfig(numWorkers=1, cacheSize=0, logLevel=request.get("log", "err")))
    model = service.modelFromConfig(request["config"])
    options = native.ResponseOptions(alignment=False, qualityScores=False, HTML=False)
    lines = request["lines"]
    batches = [[line] for line in lines] if request["per_line"] else [lines]
    results = []
    for batch in batches:
        for response in service.translate(model, native.VectorString(batch), options):
            target = response.target
            sentences = [[target.word(s, w) for w in range(target.numWords(s))] for s in range(target.numSentences())]
            results.append({"text": target.text, "sentences": sentences})
    json.dump({"results": results}, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
