"""The small ONNX graph writer every family's converter builds its graphs with (build time only: it needs `onnx`).

Each converter writes its encoder and decoder node by node (engine/families/<family>/converter/graphs.py); what they
share is this bookkeeping: initializers by name, each written once, intermediate values named after their node,
and the model header (opsets, IR version, producer) every bundle's graphs carry. Lives beside engine/bundle/
writing.py (the manifest and the move into place, also shared by the converters) because the floors let both families
import engine.bundle and no family import another. `onnx` is imported inside the methods, so reading this module
costs nothing; the frozen app excludes it all the same (packaging/qiao_bundle_rules.py BUILD_ONLY_APP_MODULES).
"""

from __future__ import annotations

from typing import Any

import numpy as np

OPSET = 18  # the default domain's opset of every graph Qiao writes
MS_OPSET = 1  # com.microsoft: onnxruntime's contrib kernels (MultiHeadAttention, QuickGelu, MatMulIntegerToFloat, ...)
IR_VERSION = 9
PRODUCER = "qiao"


class GraphWriter:
    """Nodes and initializers of one graph: named initializers (one per name), auto-named intermediate values.

    A family's converter subclasses it for its layers (Marian's `linear`, `add_norm`, ...) or uses it as it is."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0
        self._names: set[str] = set()

    def weight(self, name: str, array: np.ndarray) -> str:
        """An initializer; one already written under `name` is shared (written once), so the nodes that ask for the
        same name read the same bytes."""
        from onnx import numpy_helper

        if name not in self._names:
            self._names.add(name)
            self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def constant(self, name: str, array: np.ndarray) -> str:
        """An initializer every node that asks for `name` shares (written once): `weight` under the name that says
        so where a value is a shape, an axis or an epsilon rather than a parameter."""
        return self.weight(name, array)

    def const(self, name: str, value: Any, dtype: Any) -> str:
        """A shared initializer from a Python scalar or list (`np.array(value, dtype=dtype)`)."""
        return self.weight(name, np.array(value, dtype=dtype))

    def op(self, op_type: str, inputs: list[str], outputs: int | list[str] = 1, ms: bool = False, **attrs: Any) -> Any:
        """Append one node; its outputs are `outputs` (names) or that many fresh names `<op>_<n>.<i>`. Returns the
        output's name, or the list of names when there are several. `ms`: onnxruntime's com.microsoft domain."""
        from onnx import helper

        self._count += 1
        names = outputs if isinstance(outputs, list) else [f"{op_type}_{self._count}.{i}" for i in range(outputs)]
        domain = "com.microsoft" if ms else ""
        self.nodes.append(
            helper.make_node(op_type, inputs, names, name=f"{op_type}_{self._count}", domain=domain, **attrs)
        )
        return names if len(names) > 1 else names[0]

    def model(self, name: str, inputs: list[Any], outputs: list[Any]) -> Any:
        """The ModelProto: this graph's nodes and initializers, the default and com.microsoft opsets, IR version 9."""
        from onnx import helper

        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", MS_OPSET)]
        model = helper.make_model(graph, opset_imports=opsets, producer_name=PRODUCER)
        model.ir_version = IR_VERSION
        return model
