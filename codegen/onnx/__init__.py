"""The ONNX target: an optimized graph as an ONNX model (If/While/For kept as If/Loop), built
with the `onnx` package's helpers. Importing it imports onnx; nothing in `import amber` does."""
from .model import IR_VERSION, OPSET, Exported, to_onnx
from .scope import OnnxRefusal

__all__ = ["Exported", "IR_VERSION", "OPSET", "OnnxRefusal", "to_onnx"]
