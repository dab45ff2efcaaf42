"""The compatibility matrix, one module per concern; import the submodule you need.

- `model`: the frozen records (OrtBuild, CudaRelease, CudaMajor, LibraryWheel, TensorRTRelease, Matrix). Pure.
- `query`: THE way to ask a Matrix anything (builds for a spec, CUDA releases, wheels, sonames ...). Pure.
- `load`: `load_matrix()`: the shipped data or the refreshed cache, validated, memoized, compiled to JSON.
- `check`: validation of the data (every problem names file, entry and reason), `ortprov matrix check`.
- `refresh`: `ortprov matrix update` (new releases from a package index); `derive`: their records from wheels.

This file imports nothing, so that `import provisioner.matrix.query` pulls in neither YAML nor file I/O.
"""
