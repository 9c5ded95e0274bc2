"""The kernel corpus: OpenCL C sources with launch specs and numpy references (see spec.py)."""
