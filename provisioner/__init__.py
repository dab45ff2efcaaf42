"""ortprov: make onnxruntime-gpu really use the GPU."""

__version__ = "0.1.0"
