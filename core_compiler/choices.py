"""What the command line offers, as plain constants that import nothing: `hexplore --help` and a
usage error answer without loading the compiler (islpy, numpy, pyopencl: about a second). The
modules that act on them import them from here."""

TARGETS = ("cuda", "opencl", "c")  # `compile --target`, `grad --target` (`core_compiler.compile`)
DEVICES = ("cpu", "opencl", "cuda")  # `run --device` (`core_compiler.runtime.run`)
TUNE_TARGETS = ("cpu", "opencl")  # `tune --target`
REPORT_FORMATS = ("json", "sarif", "text", "yaml")  # `analyze --format` (`core_compiler.report.FORMATS`)
DEFAULT_SIZE = 64  # every size parameter not given, halved by `default_params` until the loops fit
DEFAULT_MAX_SHARED_BYTES = 48 * 1024  # what every CUDA GPU since Kepler gives a block by default
