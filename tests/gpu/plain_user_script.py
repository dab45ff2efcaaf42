"""A user's own program, as plain as it gets: no preload_dlls(), no `import torch`, no environment variable.

    python plain_user_script.py MODEL.onnx

Creates a session asking for CUDA, runs it once, prints the providers the session really got and, as
evidence, every CUDA library this process mapped and from where (Linux /proc/self/maps).
"""

import re
import sys

import numpy as np
import onnxruntime as ort

session = ort.InferenceSession(sys.argv[1], providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
feeds = {
    arg.name: np.random.default_rng(0)
    .standard_normal([d if isinstance(d, int) else 1 for d in arg.shape])
    .astype(np.float32)
    for arg in session.get_inputs()
}
session.run(None, feeds)
print("providers:", session.get_providers())
with open("/proc/self/maps") as maps:
    paths = sorted(
        {line.split()[-1] for line in maps if re.search(r"/lib(cu(?!da\.so)|nvrtc|nvJitLink)[^/]*\.so", line)}
    )
for path in paths:
    print("loaded:", path)
