"""Runs inside the bergamot venv (Python 3.10), never imported by the tests: translates each line with bergamot's
native module and prints the source side's words (one per SentencePiece piece: its span of the input, the final
`</s>` an empty word) as JSON. stdin: {"module": path of _bergamot*.so, "config": marian YAML, "lines": [...]}."""

import importlib.machinery
import importlib.util
import json
import sys


def main():
    request = json.load(sys.stdin)
    loader = importlib.machinery.ExtensionFileLoader("bergamot._bergamot", request["module"])
    spec = importlib.util.spec_from_file_location("bergamot._bergamot", request["module"], loader=loader)
    native = importlib.util.module_from_spec(spec)
    loader.exec_module(native)
    service = native.Service(native.ServiceConfig(numWorkers=1, cacheSize=0, logLevel="err"))
    model = service.modelFromConfig(request["config"])
    options = native.ResponseOptions(alignment=False, qualityScores=False, HTML=False)
    out = []
    for line in request["lines"]:
        for response in service.translate(model, native.VectorString([line]), options):
            source = response.source
            out.append([[source.word(s, w) for w in range(source.numWords(s))] for s in range(source.numSentences())])
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
