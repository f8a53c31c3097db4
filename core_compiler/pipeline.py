"""The pipeline's entry points (being gathered here: issue 25)."""

from core_compiler.analysis import analyze_file
from core_compiler.backend import backend_trace
from core_compiler.compile import compile_file

__all__ = ["analyze_file", "backend_trace", "compile_file"]
