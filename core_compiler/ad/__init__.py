"""Automatic differentiation of SCoP functions (the `ad` pass): activity analysis, forward
(tangent) and reverse (adjoint) mode as source-to-source transforms whose output is C that
re-enters hexplore's pipeline, gradient checks, and a JAX-style API (`grad`, `jvp`, `vjp`).

- `activity`: which variables carry derivatives; `rules`: derivative rules on loop-IR expressions;
- `forward`, `reverse`: the two modes; `accesses`: the isl questions reverse mode asks;
- `emit`, `cprint`: shared context, C text; `differentiate`: the pass driver;
- `check`: finite differences and the dot-product test on C and OpenCL; `api`: grad/jvp/vjp.
"""

from core_compiler.ad.differentiate import MODES, Derivative, derivative_name, differentiate
from core_compiler.errors import NotDifferentiable

__all__ = ["MODES", "Derivative", "NotDifferentiable", "derivative_name", "differentiate"]
